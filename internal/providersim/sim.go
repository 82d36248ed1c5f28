// Package providersim simulates the bank-linking provider (Plaid's API) for
// development and tests: the endpoints a merchant uses to link an account
// and create a processor token for the processor "service", the endpoint the
// service uses to read the account, and controls to make items, institutions
// and integrations fail. Bodies follow Plaid's published shapes, so the
// official client plaid-go works against it unchanged. State is in memory.
package providersim

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Processor is the only processor name the simulator issues tokens for.
const Processor = "service"

// Institution is a sandbox institution with its routing number.
type Institution struct {
	ID      string
	Name    string
	Routing string // 9 digits with a valid ABA check digit
}

// Institutions are Plaid's published sandbox institution ids.
var Institutions = []Institution{
	{"ins_109508", "First Platypus Bank", "011401533"},
	{"ins_109509", "First Gingham Credit Union", "011401546"},
	{"ins_109510", "Tattersall Federal Credit Union", "011401559"},
	{"ins_109511", "Tartan Bank", "011401562"},
	{"ins_109512", "Houndstooth Bank", "011401575"},
}

// Config sets who may call the simulator.
type Config struct {
	// Clients maps client ids to secrets; requests must carry a pair.
	Clients map[string]string
	// ProcessorClientID is the client of the processor partner "service":
	// the only client that may call /processor/auth/get.
	ProcessorClientID string
}

type account struct {
	id, name, official, typ, subtype, number string
}

type item struct {
	id, accessToken, clientID string
	inst                      Institution
	accounts                  []account
	loginRequired, removed    bool
}

type processorToken struct {
	item    *item
	account account
}

// Sim is the simulator. Its zero value is not usable; call New.
type Sim struct {
	cfg Config

	mu             sync.Mutex
	publicTokens   map[string]*item // single use
	items          map[string]*item // by access token
	itemsByID      map[string]*item
	tokens         map[string]processorToken
	disabled       map[string]bool // institution ids
	integrationOff map[string]bool // client ids
	outage         bool
	seq            int // account-number sequence: every account is distinct
}

// New returns a simulator.
func New(cfg Config) *Sim {
	// Start the account-number sequence at random so that a restarted
	// simulator does not hand out the numbers of the previous run again.
	var b [4]byte
	rand.Read(b[:])
	start := int(uint32(b[0])<<16|uint32(b[1])<<8|uint32(b[2])) * 4
	return &Sim{
		seq: start,
		cfg: cfg, publicTokens: map[string]*item{}, items: map[string]*item{}, itemsByID: map[string]*item{},
		tokens: map[string]processorToken{}, disabled: map[string]bool{}, integrationOff: map[string]bool{},
	}
}

func uuid() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func randomID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 37)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Handler serves the provider endpoints and the /sim/ controls.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	api := map[string]func(client string, body map[string]any) (any, *apiError){
		"/link/token/create":           s.linkTokenCreate,
		"/sandbox/public_token/create": s.sandboxPublicTokenCreate,
		"/item/public_token/exchange":  s.publicTokenExchange,
		"/accounts/get":                s.accountsGet,
		"/processor/token/create":      s.processorTokenCreate,
		"/processor/auth/get":          s.processorAuthGet,
		"/item/remove":                 s.itemRemove,
	}
	for path, fn := range api {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			s.serveAPI(w, r, fn)
		})
	}
	mux.HandleFunc("POST /sim/items/login-required", s.control(s.setLoginRequired))
	mux.HandleFunc("POST /sim/institutions/disable", s.control(s.setInstitutionDisabled))
	mux.HandleFunc("POST /sim/clients/integration", s.control(s.setIntegration))
	mux.HandleFunc("POST /sim/outage", s.control(s.setOutage))
	return mux
}

// apiError is a Plaid error object.
type apiError struct {
	status int
	typ    string
	code   string
	msg    string
}

func errInput(code, msg string) *apiError { return &apiError{400, "INVALID_INPUT", code, msg} }

func (s *Sim) serveAPI(w http.ResponseWriter, r *http.Request, fn func(string, map[string]any) (any, *apiError)) {
	requestID := randomID()[:15]
	var body map[string]any
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	var out any
	var aerr *apiError
	switch {
	case err != nil:
		aerr = &apiError{400, "INVALID_REQUEST", "INVALID_BODY", "body could not be parsed as JSON"}
	default:
		s.mu.Lock()
		outage := s.outage
		s.mu.Unlock()
		if outage {
			aerr = &apiError{500, "API_ERROR", "INTERNAL_SERVER_ERROR", "an unexpected error occurred (simulated outage)"}
			break
		}
		client, ok := s.authenticate(r, body)
		if !ok {
			aerr = errInput("INVALID_API_KEYS", "invalid client_id or secret provided")
			break
		}
		out, aerr = fn(client, body)
	}
	w.Header().Set("Content-Type", "application/json")
	if aerr != nil {
		w.WriteHeader(aerr.status)
		json.NewEncoder(w).Encode(map[string]any{
			"error_type": aerr.typ, "error_code": aerr.code, "error_message": aerr.msg,
			"display_message": nil, "request_id": requestID, "causes": []any{}, "status": aerr.status,
			"documentation_url": "https://plaid.com/docs/errors/", "suggested_action": nil,
		})
		return
	}
	m := out.(map[string]any)
	m["request_id"] = requestID
	json.NewEncoder(w).Encode(m)
}

// authenticate takes client_id and secret from the body or the
// PLAID-CLIENT-ID and PLAID-SECRET headers, as Plaid does.
func (s *Sim) authenticate(r *http.Request, body map[string]any) (string, bool) {
	id, _ := body["client_id"].(string)
	secret, _ := body["secret"].(string)
	if id == "" {
		id = r.Header.Get("PLAID-CLIENT-ID")
	}
	if secret == "" {
		secret = r.Header.Get("PLAID-SECRET")
	}
	want, ok := s.cfg.Clients[id]
	return id, ok && id != "" && secret == want
}

func str(body map[string]any, key string) string {
	v, _ := body[key].(string)
	return v
}

func (s *Sim) linkTokenCreate(_ string, body map[string]any) (any, *apiError) {
	user, _ := body["user"].(map[string]any)
	if user == nil || str(user, "client_user_id") == "" {
		return nil, &apiError{400, "INVALID_REQUEST", "MISSING_FIELDS", "the following required fields are missing: user.client_user_id"}
	}
	return map[string]any{
		"link_token": "link-sandbox-" + uuid(),
		"expiration": time.Now().UTC().Add(4 * time.Hour).Format(time.RFC3339),
	}, nil
}

func institution(id string) (Institution, bool) {
	for _, in := range Institutions {
		if in.ID == id {
			return in, true
		}
	}
	return Institution{}, false
}

func (s *Sim) sandboxPublicTokenCreate(client string, body map[string]any) (any, *apiError) {
	inst, ok := institution(str(body, "institution_id"))
	if !ok {
		return nil, errInput("INVALID_INSTITUTION", "invalid institution_id provided")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.disabled[inst.ID] {
		return nil, &apiError{400, "INSTITUTION_ERROR", "INSTITUTION_NOT_AVAILABLE", "this institution is not currently available"}
	}
	it := &item{id: randomID(), accessToken: "access-sandbox-" + uuid(), clientID: client, inst: inst}
	for _, a := range []struct{ name, official, typ, subtype string }{
		{"Plaid Checking", "Plaid Gold Standard 0% Interest Checking", "depository", "checking"},
		{"Plaid Saving", "Plaid Silver Standard 0.1% Interest Saving", "depository", "savings"},
		{"Plaid Credit Card", "Plaid Diamond 12.5% APR Interest Credit Card", "credit", "credit card"},
	} {
		s.seq++
		it.accounts = append(it.accounts, account{
			id: randomID(), name: a.name, official: a.official, typ: a.typ, subtype: a.subtype,
			number: fmt.Sprintf("%s%08d", inst.ID[len(inst.ID)-4:], s.seq),
		})
	}
	public := "public-sandbox-" + uuid()
	s.publicTokens[public] = it
	// Like Plaid's sandbox shortcut, no accounts are returned here: the
	// merchant fetches them with /accounts/get after the exchange.
	return map[string]any{"public_token": public}, nil
}

func (s *Sim) publicTokenExchange(client string, body map[string]any) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.publicTokens[str(body, "public_token")]
	if !ok || it.clientID != client {
		return nil, errInput("INVALID_PUBLIC_TOKEN", "provided public token is in an invalid format or has expired")
	}
	delete(s.publicTokens, str(body, "public_token"))
	s.items[it.accessToken] = it
	s.itemsByID[it.id] = it
	return map[string]any{"access_token": it.accessToken, "item_id": it.id}, nil
}

// liveItem returns the caller's item for an access token; call with mu held.
func (s *Sim) liveItem(client, accessToken string) (*item, *apiError) {
	it, ok := s.items[accessToken]
	if !ok || it.removed || it.clientID != client {
		return nil, errInput("INVALID_ACCESS_TOKEN", "provided access token is in an invalid format, expired or revoked")
	}
	return it, s.itemState(it)
}

// itemState reports why an item cannot be used now; call with mu held.
func (s *Sim) itemState(it *item) *apiError {
	switch {
	case s.disabled[it.inst.ID]:
		return &apiError{400, "INSTITUTION_ERROR", "INSTITUTION_NOT_AVAILABLE", "this institution is not currently available"}
	case it.loginRequired:
		return &apiError{400, "ITEM_ERROR", "ITEM_LOGIN_REQUIRED", "the login details of this item have changed (credentials, MFA, or required user action) and a user login is required to update this information"}
	}
	return nil
}

func accountJSON(a account) map[string]any {
	return map[string]any{
		"account_id": a.id, "name": a.name, "official_name": a.official, "mask": a.number[len(a.number)-4:],
		"type": a.typ, "subtype": a.subtype,
		"balances": map[string]any{"available": 100.0, "current": 110.0, "limit": nil,
			"iso_currency_code": "USD", "unofficial_currency_code": nil},
	}
}

func (s *Sim) accountsGet(client string, body map[string]any) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, aerr := s.liveItem(client, str(body, "access_token"))
	if aerr != nil {
		return nil, aerr
	}
	accounts := []any{}
	for _, a := range it.accounts {
		accounts = append(accounts, accountJSON(a))
	}
	return map[string]any{
		"accounts": accounts,
		"item": map[string]any{
			"item_id": it.id, "institution_id": it.inst.ID, "webhook": nil, "error": nil,
			"available_products": []string{"balance"}, "billed_products": []string{"auth"},
			"consent_expiration_time": nil, "update_type": "background",
		},
	}, nil
}

func (s *Sim) processorTokenCreate(client string, body map[string]any) (any, *apiError) {
	if p := str(body, "processor"); p != Processor {
		return nil, errInput("INVALID_FIELD", fmt.Sprintf("processor %q is not a valid processor; use %q", p, Processor))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.integrationOff[client] {
		return nil, notEnabled()
	}
	it, aerr := s.liveItem(client, str(body, "access_token"))
	if aerr != nil {
		return nil, aerr
	}
	for _, a := range it.accounts {
		if a.id == str(body, "account_id") {
			tok := "processor-sandbox-" + uuid()
			s.tokens[tok] = processorToken{item: it, account: a}
			return map[string]any{"processor_token": tok}, nil
		}
	}
	return nil, errInput("INVALID_ACCOUNT_ID", "the account_id is not one of this item's accounts")
}

func notEnabled() *apiError {
	return &apiError{400, "INVALID_REQUEST", "PROCESSOR_NOT_ENABLED",
		`the integration with the processor "service" is not enabled for this client; enable it in the dashboard`}
}

func (s *Sim) processorAuthGet(client string, body map[string]any) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt, ok := s.tokens[str(body, "processor_token")]
	if !ok || client != s.cfg.ProcessorClientID {
		return nil, errInput("INVALID_PROCESSOR_TOKEN", "provided processor token is in an invalid format or expired")
	}
	if pt.item.removed {
		return nil, errInput("INVALID_PROCESSOR_TOKEN", "the item of this processor token was removed: the token is revoked")
	}
	if s.integrationOff[pt.item.clientID] {
		return nil, notEnabled()
	}
	if aerr := s.itemState(pt.item); aerr != nil {
		return nil, aerr
	}
	return map[string]any{
		"account": accountJSON(pt.account),
		"numbers": map[string]any{"ach": map[string]any{
			"account_id": pt.account.id, "account": pt.account.number,
			"routing": pt.item.inst.Routing, "wire_routing": pt.item.inst.Routing,
		}},
	}, nil
}

func (s *Sim) itemRemove(client string, body map[string]any) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[str(body, "access_token")]
	if !ok || it.removed || it.clientID != client {
		return nil, errInput("INVALID_ACCESS_TOKEN", "provided access token is in an invalid format, expired or revoked")
	}
	it.removed = true
	return map[string]any{}, nil
}

// control wraps a /sim/ switch: a JSON body in, {"ok": true} or an error out.
func (s *Sim) control(fn func(body map[string]any) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body); err != nil {
			http.Error(w, `{"error":"send a JSON object"}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		err := fn(body)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		w.Write([]byte(`{"ok":true}` + "\n"))
	}
}

// flag reads an optional boolean member (default true).
func flag(body map[string]any, key string) bool {
	v, ok := body[key].(bool)
	return !ok || v
}

func (s *Sim) setLoginRequired(body map[string]any) error {
	it := s.items[str(body, "access_token")]
	if it == nil {
		it = s.itemsByID[str(body, "item_id")]
	}
	if it == nil {
		return fmt.Errorf("unknown item: give access_token or item_id")
	}
	it.loginRequired = flag(body, "required")
	return nil
}

func (s *Sim) setInstitutionDisabled(body map[string]any) error {
	inst, ok := institution(str(body, "institution_id"))
	if !ok {
		return fmt.Errorf("unknown institution_id; sandbox ids are ins_109508 … ins_109512")
	}
	s.disabled[inst.ID] = flag(body, "disabled")
	return nil
}

func (s *Sim) setIntegration(body map[string]any) error {
	id := str(body, "client_id")
	if _, ok := s.cfg.Clients[id]; !ok {
		return fmt.Errorf("unknown client_id")
	}
	s.integrationOff[id] = !flag(body, "enabled")
	return nil
}

func (s *Sim) setOutage(body map[string]any) error {
	s.outage = flag(body, "enabled")
	return nil
}
