// Package providersim simulates the bank-linking provider (Plaid's API) for
// development and tests: the endpoints a merchant uses to link an account
// and create a processor token for the processor "service", the endpoint the
// service uses to read the account, and controls to make items, institutions
// and integrations fail. Bodies follow Plaid's published shapes, so the
// official client plaid-go works against it unchanged. State is in memory.
//
// Unlike Plaid's sandbox, which gives every item the same account numbers,
// each simulated account has numbers no other item has, so the service's
// rule that an account number belongs to one customer per environment does
// not get in the way of development; 'fundsource provider-sim
// --plaid-sandbox-numbers' behaves like Plaid's sandbox to try exactly that
// case. Requests are checked as Plaid checks them, and a test decodes every
// answer into plaid-go's models and fails on members they do not know, so
// the simulator cannot drift from the client.
package providersim

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Processor is the only processor name the simulator issues tokens for.
const Processor = "service"

// Institution is a sandbox institution with its routing numbers.
type Institution struct {
	ID          string
	Name        string
	Routing     string // ACH: 9 digits with a valid ABA check digit
	WireRouting string // wires: another 9-digit number, as at real banks
}

// Institutions are Plaid's published sandbox institution ids.
var Institutions = []Institution{
	{"ins_109508", "First Platypus Bank", "011401533", "021000021"},
	{"ins_109509", "First Gingham Credit Union", "011401546", "021000089"},
	{"ins_109510", "Tattersall Federal Credit Union", "011401559", "026009593"},
	{"ins_109511", "Tartan Bank", "011401562", "021000322"},
	{"ins_109512", "Houndstooth Bank", "011401575", "011000138"},
}

// Plaid's sandbox gives every Item the same numbers: these, whatever the
// institution. With Config.SandboxNumbers the simulator does too.
const (
	SandboxRouting        = "011401533"
	SandboxWireRouting    = "021000021"
	SandboxCheckingNumber = "1111222233330000"
	SandboxSavingsNumber  = "1111222233331111"
	sandboxCreditNumber   = "1111222233333333"
)

// Config sets who may call the simulator.
type Config struct {
	// Clients maps client ids to secrets; requests must carry a pair.
	Clients map[string]string
	// ProcessorClientID is the client of the processor partner "service":
	// the only client that may call /processor/auth/get.
	ProcessorClientID string
	// SandboxNumbers gives every Item Plaid's fixed sandbox account and
	// routing numbers, as Plaid's own sandbox does, instead of distinct
	// numbers per account. Two customers linking "Plaid Checking" then
	// hold the same account number.
	SandboxNumbers bool
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
	seq            int    // account-number sequence: every account is distinct
	fail           string // what failPath answers instead (see /sim/fail); "" for none
	failPath       string // /processor/auth/get or /processor/identity/match
	failLeft       int    // answers left to fail; 0 fails until cleared
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
		"/processor/identity/get":      s.processorIdentityGet,
		"/processor/identity/match":    s.processorIdentityMatch,
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
	mux.HandleFunc("POST /sim/fail", s.control(s.setFail))
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
			aerr = plaidError("INTERNAL_SERVER_ERROR")
			break
		}
		if r.URL.Path == "/processor/auth/get" || r.URL.Path == "/processor/identity/match" {
			switch fail := s.takeFailure(r.URL.Path); fail {
			case "":
			case FailTimeout:
				// Nothing comes back before the client gives up.
				select {
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
				return
			case FailHTML502:
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusBadGateway)
				io.WriteString(w, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>\n")
				return
			default:
				aerr = plaidError(fail)
			}
			if aerr != nil {
				break
			}
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

// takeFailure returns the failure a call of path answers with, counting
// it down.
func (s *Sim) takeFailure(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if path != s.failPath {
		return ""
	}
	fail := s.fail
	if fail != "" && s.failLeft > 0 {
		if s.failLeft--; s.failLeft == 0 {
			s.fail = ""
		}
	}
	return fail
}

func (s *Sim) linkTokenCreate(_ string, body map[string]any) (any, *apiError) {
	if aerr := missing(body, "client_name", "language", "country_codes", "user.client_user_id"); aerr != nil {
		return nil, aerr
	}
	if aerr := enumList(body, "country_codes", validCountryCode); aerr != nil {
		return nil, aerr
	}
	if aerr := enumList(body, "products", validProduct); aerr != nil {
		return nil, aerr
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
	if aerr := missing(body, "institution_id", "initial_products"); aerr != nil {
		return nil, aerr
	}
	if aerr := enumList(body, "initial_products", validProduct); aerr != nil {
		return nil, aerr
	}
	inst, ok := institution(str(body, "institution_id"))
	if !ok {
		return nil, errInput("INVALID_INSTITUTION", "invalid institution_id provided")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.disabled[inst.ID] {
		return nil, plaidError("INSTITUTION_NOT_AVAILABLE")
	}
	it := &item{id: randomID(), accessToken: "access-sandbox-" + uuid(), clientID: client, inst: inst}
	if s.cfg.SandboxNumbers {
		it.inst.Routing, it.inst.WireRouting = SandboxRouting, SandboxWireRouting
	}
	for _, a := range []struct{ name, official, typ, subtype, sandboxNumber string }{
		{"Plaid Checking", "Plaid Gold Standard 0% Interest Checking", "depository", "checking", SandboxCheckingNumber},
		{"Plaid Saving", "Plaid Silver Standard 0.1% Interest Saving", "depository", "savings", SandboxSavingsNumber},
		{"Plaid Credit Card", "Plaid Diamond 12.5% APR Interest Credit Card", "credit", "credit card", sandboxCreditNumber},
	} {
		s.seq++
		number := fmt.Sprintf("%s%08d", inst.ID[len(inst.ID)-4:], s.seq)
		if s.cfg.SandboxNumbers {
			number = a.sandboxNumber
		}
		it.accounts = append(it.accounts, account{
			id: randomID(), name: a.name, official: a.official, typ: a.typ, subtype: a.subtype, number: number,
		})
	}
	public := "public-sandbox-" + uuid()
	s.publicTokens[public] = it
	// Like Plaid's sandbox shortcut, no accounts are returned here: the
	// merchant fetches them with /accounts/get after the exchange.
	return map[string]any{"public_token": public}, nil
}

func (s *Sim) publicTokenExchange(client string, body map[string]any) (any, *apiError) {
	if aerr := missing(body, "public_token"); aerr != nil {
		return nil, aerr
	}
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
		return plaidError("INSTITUTION_NOT_AVAILABLE")
	case it.loginRequired:
		return plaidError("ITEM_LOGIN_REQUIRED")
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
	if aerr := missing(body, "access_token"); aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, aerr := s.liveItem(client, str(body, "access_token"))
	if aerr != nil {
		return nil, aerr
	}
	// options.account_ids narrows the answer to those accounts; an id that
	// is not the Item's is refused.
	var only []string
	if opts, _ := body["options"].(map[string]any); opts != nil {
		if ids, present := opts["account_ids"]; present {
			list, ok := ids.([]any)
			if !ok {
				return nil, invalidField("options.account_ids must be an array")
			}
			for _, id := range list {
				want, _ := id.(string)
				if !slices.ContainsFunc(it.accounts, func(a account) bool { return a.id == want }) {
					return nil, errInput("INVALID_ACCOUNT_ID", "one or more of the account IDs is invalid")
				}
				only = append(only, want)
			}
		}
	}
	accounts := []any{}
	for _, a := range it.accounts {
		if only == nil || slices.Contains(only, a.id) {
			accounts = append(accounts, accountJSON(a))
		}
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
	if aerr := missing(body, "access_token", "account_id", "processor"); aerr != nil {
		return nil, aerr
	}
	if p := str(body, "processor"); p != Processor {
		return nil, invalidField("processor %q is not a valid processor; use %q", p, Processor)
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

// notEnabled is Plaid's answer when the client's keys are not enabled for
// the processor's integration.
func notEnabled() *apiError { return plaidError("INVALID_PRODUCT") }

// processorToken returns the live processor token of body's
// processor_token for the processor client, or Plaid's error. Call it
// with s.mu held.
func (s *Sim) processorToken(client string, body map[string]any) (processorToken, *apiError) {
	if aerr := missing(body, "processor_token"); aerr != nil {
		return processorToken{}, aerr
	}
	pt, ok := s.tokens[str(body, "processor_token")]
	if !ok || client != s.cfg.ProcessorClientID {
		return processorToken{}, errInput("INVALID_PROCESSOR_TOKEN", "provided processor token is in an invalid format or expired")
	}
	if pt.item.removed {
		return processorToken{}, errInput("INVALID_PROCESSOR_TOKEN", "the item of this processor token was removed: the token is revoked")
	}
	if s.integrationOff[pt.item.clientID] {
		return processorToken{}, notEnabled()
	}
	if aerr := s.itemState(pt.item); aerr != nil {
		return processorToken{}, aerr
	}
	return pt, nil
}

func (s *Sim) processorAuthGet(client string, body map[string]any) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt, aerr := s.processorToken(client, body)
	if aerr != nil {
		return nil, aerr
	}
	if pt.account.typ != "depository" {
		// A credit card has no ACH numbers: Plaid answers with an error,
		// not with an empty or made-up ach member.
		return nil, plaidError("NO_AUTH_ACCOUNTS")
	}
	return map[string]any{
		"account": accountJSON(pt.account),
		"numbers": map[string]any{"ach": map[string]any{
			"account_id": pt.account.id, "account": pt.account.number,
			"routing": pt.item.inst.Routing, "wire_routing": pt.item.inst.WireRouting,
		}},
	}, nil
}

func (s *Sim) itemRemove(client string, body map[string]any) (any, *apiError) {
	if aerr := missing(body, "access_token"); aerr != nil {
		return nil, aerr
	}
	if rc, present := body["reason_code"]; present {
		code, _ := rc.(string)
		if !validReasonCode(code) {
			return nil, invalidField("reason_code %q is not one of the allowed values", fmt.Sprint(rc))
		}
	}
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

// setFail makes /processor/auth/get, or the "path" given
// (/processor/identity/match), answer with one of Failures: a Plaid error
// code as Plaid sends it, an HTML 502, or no answer at all ("timeout").
// "count" limits it to that many answers; "" clears it.
func (s *Sim) setFail(body map[string]any) error {
	code := str(body, "error_code")
	if _, known := plaidErrors[code]; !known && code != "" && code != FailHTML502 && code != FailTimeout {
		return fmt.Errorf("unknown error_code; one of %s", strings.Join(Failures(), ", "))
	}
	path := cmp.Or(str(body, "path"), "/processor/auth/get")
	if path != "/processor/auth/get" && path != "/processor/identity/match" {
		return fmt.Errorf("path must be /processor/auth/get or /processor/identity/match")
	}
	n, _ := body["count"].(float64)
	s.fail, s.failPath, s.failLeft = code, path, int(n)
	return nil
}
