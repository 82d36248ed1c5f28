// Package config reads the service's configuration from environment
// variables, fills development defaults, generates
// development keys once under DATA_DIR, and refuses to run production without
// explicit keys.
//
// When GOGC and GOMEMLIMIT are unset, serve, dev and bench use 400 and a
// soft limit of 256 MiB: the live heap is small, and the default collects
// many times a second under load.
//
// MAX_CONNECTIONS caps the connections the service holds open at once;
// those over it are closed at accept. Every open connection holds its
// read and write buffers, its goroutine's stack and its TLS or HTTP/2
// state until it closes, idle keep-alive ones too, so the default is sized
// to the memory limit: half of GOMEMLIMIT (256 MiB when unset, no limit
// counting as 4 GiB) divided by a budget of 64 KiB a connection, kept from
// 128 to 65536. The other half is the heap of the requests themselves. At
// the default limit that is 2048 connections.
package config

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Mode is development or production.
type Mode string

// The two modes.
const (
	Development Mode = "development"
	Production  Mode = "production"
)

// Key is one named symmetric key.
type Key struct {
	ID    string
	Bytes []byte
}

// Config is the whole typed configuration.
type Config struct {
	Mode              Mode
	DatabaseURL       string // empty in development means "start the private cluster"
	ListenAddr        string
	SandboxBaseURL    *url.URL
	ProductionBaseURL *url.URL
	HostedBaseURL     *url.URL
	DataDir           string

	// AccountEncryptionKeys: the first encrypts, all decrypt. Each is 32 bytes.
	AccountEncryptionKeys []Key
	FingerprintKey        []byte // 32 bytes
	// IdempotencyKey keys the stored hashes of idempotent requests
	// (HMAC-SHA256), so a database reader cannot test guesses of a request
	// body (an account number) against them. 32 bytes.
	IdempotencyKey []byte
	SessionKeys    [][]byte // each 32 or 64 bytes
	// AuditKey keys the audit log's hash chain (HMAC-SHA256), so a writer
	// with only database access cannot re-hash a changed chain. 32 to 64
	// bytes.
	AuditKey []byte
	// AuditCheckpointFile receives each merchant's audit chain head every
	// minute it changed (JSON lines), outside the database.
	AuditCheckpointFile string

	// RoutingDirectoryFile is the FedACH participant directory
	// (FedACHdir.txt); empty uses the embedded sample, which accepts
	// unknown (check-digit-valid) numbers, and is refused in production.
	RoutingDirectoryFile string
	// SanctionsFile is the Treasury's SDN list in its sdn.csv form
	// (OFAC_SDN_FILE; required in production); empty uses the embedded
	// sample of fictitious names. SanctionsAltFile is its alt.csv, the
	// entries' aliases (OFAC_ALT_FILE; optional).
	SanctionsFile    string
	SanctionsAltFile string

	// PlaidBaseURL, PlaidClientID and PlaidSecret reach the bank-linking
	// provider as the processor "service". In development they default to
	// the bundled simulator at ProviderSimAddr and its service client.
	PlaidBaseURL  string
	PlaidClientID string
	PlaidSecret   string
	// ProviderSimAddr is where 'make run' starts the provider simulator
	// (development, when PLAID_BASE_URL is unset).
	ProviderSimAddr string
	// ProviderSimulator: development without PLAID_BASE_URL, so 'make run'
	// starts the simulator and the service uses it.
	ProviderSimulator bool

	// InstantRailURL is the instant rail's endpoint (a partner bank's) that
	// takes pacs.008 credits. Empty: sandbox keys use the rail simulator in
	// process and production has no instant rail ('auto' falls back).
	InstantRailURL string
	// InstantDirectoryFile is a CSV (routing_number,rail) whose rows add to
	// and override the embedded sample of banks reachable on a rail.
	InstantDirectoryFile string
	// InstantRailLimits is the largest instant credit each rail carries,
	// in cents by rail (INSTANT_RAIL_LIMITS, ParseInstantRailLimits).
	InstantRailLimits map[string]int64
	// RailSimAddr is where 'make run' starts the rail simulator
	// (development, when INSTANT_RAIL_URL is unset); RailSimulator says it
	// does.
	RailSimAddr   string
	RailSimulator bool

	// WebhookAllowPrivateTargets lets webhooks go to loopback and private
	// addresses (development; on by default there, off in production).
	WebhookAllowPrivateTargets bool
	// WebhookInFlight is how many deliveries one process sends at once;
	// each is a goroutine, not a database connection.
	WebhookInFlight int
	// WebhookPerEndpoint is how many of them may go to one endpoint at once.
	WebhookPerEndpoint int
	// WebhookTimeout bounds one delivery attempt.
	WebhookTimeout time.Duration
	// WebhookDisableAfter disables an endpoint that has failed this long
	// without a success.
	WebhookDisableAfter time.Duration
	// WebhookPollInterval is how often a process looks for due deliveries
	// besides the notifications that wake it.
	WebhookPollInterval time.Duration

	// RateLimitSandbox and RateLimitProduction are requests per second per
	// API key; 0 turns the limit off.
	RateLimitSandbox    float64
	RateLimitProduction float64

	// HostedSubmitsPerIP and HostedSubmitsPerSource bound the hosted page's
	// form submissions: that many at once, refilled evenly over 10 minutes.
	HostedSubmitsPerIP     int
	HostedSubmitsPerSource int

	// APIKeyCacheTTL is how long a server may answer from its memory of a
	// resolved API key (cleared on every key change); 0 turns the cache off.
	APIKeyCacheTTL time.Duration

	// DashboardIdleTimeout signs a dashboard session out after this long
	// without a request; DashboardSessionMaxAge after this long in any case.
	DashboardIdleTimeout   time.Duration
	DashboardSessionMaxAge time.Duration
	// SignInAttemptsPerEmail and SignInAttemptsPerIP bound dashboard
	// sign-in attempts: that many at once, refilled evenly over 15 minutes.
	SignInAttemptsPerEmail int
	SignInAttemptsPerIP    int
	// SignInSlowdown is how long a sign-in waits once an email's attempts
	// from all addresses together (20 × SignInAttemptsPerEmail per 15
	// minutes) are spent: slowed, not refused.
	SignInSlowdown time.Duration

	// PaymentMaxCents is the largest payment or subscription amount, in cents.
	PaymentMaxCents int64
	// PaymentSettleDelay is how long a sandbox payment stays pending before
	// it settles by itself.
	PaymentSettleDelay time.Duration

	// ACH origination of production entries: on when ACHODFIRouting is
	// set. ACHOutboxDir receives the NACHA files.
	ACHOutboxDir          string
	ACHODFIRouting        string
	ACHDestinationRouting string // defaults to ACHODFIRouting
	ACHDestinationName    string
	ACHOriginName         string
	ACHCompanyName        string
	ACHCompanyID          string
	// ACHMicroOffset (default on) balances each micro-deposit batch with a
	// debit from ACHOffsetAccount, the originator's account at the ODFI.
	ACHMicroOffset   bool
	ACHOffsetAccount string
	// ACHSettlementAccount is the account the bank settles the files on,
	// as its camt.053 statements name it (<Acct><Id><IBAN> or
	// <Othr><Id>): only its statements reconcile. Required in production
	// with ACH origination on; in development it defaults to the account
	// the local ACH network (fundsource-lab achnet) names, ODFI- and the
	// ODFI's routing number.
	ACHSettlementAccount string
	// ACHSFTPURL (sftp://user@host:port/path), when set, delivers files to
	// the bank's SFTP server (path/outbound) and polls path/inbound,
	// logging in with ACHSFTPKeyFile and checking the server's key against
	// ACHSFTPKnownHosts. Without it ACHOutboxDir and ACHInboxDir are the
	// bank's folders.
	ACHSFTPURL        string
	ACHSFTPKeyFile    string
	ACHSFTPKnownHosts string
	ACHInboxDir       string
	// ACHWindows is when files are built and what dates entries carry.
	ACHWindows ACHSchedule

	// PprofAddr, when set, serves Go's profiler (net/http/pprof) on this
	// address, apart from the service: an operator's tool, never public.
	PprofAddr string
	// MetricsAddr, when set, serves /metrics on this listener alone. In
	// production /metrics is served nowhere else; in development, without
	// it, the main listener serves it too.
	MetricsAddr string

	// MaxConnections is how many connections the main listener holds
	// open at once (MAX_CONNECTIONS; the default follows GOMEMLIMIT, see
	// the package doc).
	MaxConnections int

	// TrustedProxies are the addresses (IPs or CIDRs) of reverse proxies
	// whose X-Forwarded-For names the client; empty trusts none, so the
	// client is the connection's peer.
	TrustedProxies []string
}

// The provider simulator's clients in development: the service (the
// processor "service") and the demo merchant. Development-only values.
const (
	SimServiceClientID  = "fundsource-service"
	SimServiceSecret    = "fundsource-service-secret"
	SimMerchantClientID = "demo-merchant"
	SimMerchantSecret   = "demo-merchant-secret"
)

// Getenv looks up one environment variable ("" when unset).
type Getenv func(string) string

// Names of the key variables, in the order they are reported.
const (
	varEncryption  = "ACCOUNT_ENCRYPTION_KEYS"
	varFingerprint = "FINGERPRINT_KEY"
	varSession     = "SESSION_KEYS"
	varIdempotency = "IDEMPOTENCY_KEY"
	varAudit       = "AUDIT_KEY"
)

// keyVars are the key variables, in the order they are reported.
var keyVars = []string{varEncryption, varFingerprint, varSession, varIdempotency, varAudit}

// generateKey makes a development value for a key variable.
func generateKey(name string) string {
	switch name {
	case varEncryption:
		return "k1:" + randomKey(32)
	case varSession:
		return randomKey(64)
	}
	return randomKey(32)
}

// Load reads the configuration. In development, key variables that are unset
// are read from (or generated once into) DATA_DIR/keys.env.
func Load(getenv Getenv) (*Config, error) {
	c := &Config{
		Mode:                 Mode(orDefault(getenv("FUNDSOURCE_MODE"), string(Development))),
		DatabaseURL:          getenv("DATABASE_URL"),
		ListenAddr:           orDefault(getenv("LISTEN_ADDR"), "127.0.0.1:8080"),
		DataDir:              orDefault(getenv("DATA_DIR"), ".data"),
		RoutingDirectoryFile: getenv("ROUTING_DIRECTORY_FILE"),
		SanctionsFile:        getenv("OFAC_SDN_FILE"),
		SanctionsAltFile:     getenv("OFAC_ALT_FILE"),
		PlaidBaseURL:         getenv("PLAID_BASE_URL"),
		PlaidClientID:        getenv("PLAID_CLIENT_ID"),
		PlaidSecret:          getenv("PLAID_SECRET"),
	}
	if c.Mode != Development && c.Mode != Production {
		return nil, fmt.Errorf("FUNDSOURCE_MODE must be development or production, not %q", c.Mode)
	}
	prod := c.Mode == Production
	c.ProviderSimAddr = orDefault(getenv("PROVIDER_SIM_ADDR"), "127.0.0.1:8090")
	if !prod && c.PlaidBaseURL == "" {
		c.ProviderSimulator = true
		c.PlaidBaseURL = "http://" + c.ProviderSimAddr
		c.PlaidClientID = orDefault(c.PlaidClientID, SimServiceClientID)
		c.PlaidSecret = orDefault(c.PlaidSecret, SimServiceSecret)
	}
	c.InstantRailURL = getenv("INSTANT_RAIL_URL")
	c.InstantDirectoryFile = getenv("INSTANT_DIRECTORY_FILE")
	limits, lerr := ParseInstantRailLimits(orDefault(getenv("INSTANT_RAIL_LIMITS"), DefaultInstantRailLimits))
	if lerr != nil {
		return nil, lerr
	}
	c.InstantRailLimits = limits
	c.RailSimAddr = orDefault(getenv("RAIL_SIM_ADDR"), "127.0.0.1:8091")
	c.RailSimulator = !prod && c.InstantRailURL == ""
	if c.InstantRailURL != "" {
		u, err := url.Parse(c.InstantRailURL)
		if err != nil || (u.Scheme != "https" && (prod || u.Scheme != "http")) || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("INSTANT_RAIL_URL must be an absolute https URL (http too in development) without user info, got %q", c.InstantRailURL)
		}
	}
	if prod && c.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is required in production")
	}
	if prod && c.SanctionsFile == "" {
		return nil, errors.New("OFAC_SDN_FILE is required in production: the Treasury's SDN list (sdn.csv), which customers' names are screened against")
	}
	if c.SanctionsAltFile != "" && c.SanctionsFile == "" {
		return nil, errors.New("OFAC_ALT_FILE names the aliases of the list in OFAC_SDN_FILE, which is not set")
	}
	if prod && c.RoutingDirectoryFile == "" {
		return nil, errors.New("ROUTING_DIRECTORY_FILE is required in production: the Federal Reserve's FedACH participant directory (FedACHdir.txt)")
	}

	var err error
	// Development base URLs follow LISTEN_ADDR, so printed links work.
	defaultBase := "http://127.0.0.1:8080"
	if host, port, err := net.SplitHostPort(c.ListenAddr); err == nil && port != "" {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
		defaultBase = "http://" + net.JoinHostPort(host, port)
	}
	if c.SandboxBaseURL, err = baseURL(getenv, "SANDBOX_BASE_URL", defaultBase, prod); err != nil {
		return nil, err
	}
	if c.ProductionBaseURL, err = baseURL(getenv, "PRODUCTION_BASE_URL", defaultBase, prod); err != nil {
		return nil, err
	}
	if c.HostedBaseURL, err = baseURL(getenv, "HOSTED_BASE_URL", defaultBase, prod); err != nil {
		return nil, err
	}

	if c.WebhookAllowPrivateTargets, err = boolVar(getenv, "WEBHOOK_ALLOW_PRIVATE_TARGETS", !prod); err != nil {
		return nil, err
	}
	if c.WebhookInFlight, err = intVar(getenv, "WEBHOOK_INFLIGHT", 256, 1, 100000); err != nil {
		return nil, err
	}
	if c.WebhookTimeout, err = durationIn(getenv, "WEBHOOK_TIMEOUT", 10*time.Second, 100*time.Millisecond, 15*time.Second,
		"100ms to 15s such as 10s"); err != nil {
		return nil, err
	}
	if c.WebhookDisableAfter, err = durationIn(getenv, "WEBHOOK_DISABLE_AFTER", 72*time.Hour, time.Second, 30*24*time.Hour,
		"1s to 720h such as 72h"); err != nil {
		return nil, err
	}
	if c.WebhookPerEndpoint, err = intVar(getenv, "WEBHOOK_PER_ENDPOINT", 8, 1, 256); err != nil {
		return nil, err
	}
	if c.WebhookPollInterval, err = durationVar(getenv, "WEBHOOK_POLL_INTERVAL", time.Second); err != nil {
		return nil, err
	}
	if c.RateLimitSandbox, err = rateVar(getenv, "RATE_LIMIT_SANDBOX", 25); err != nil {
		return nil, err
	}
	if c.RateLimitProduction, err = rateVar(getenv, "RATE_LIMIT_PRODUCTION", 100); err != nil {
		return nil, err
	}

	if c.HostedSubmitsPerIP, err = intVar(getenv, "HOSTED_SUBMITS_PER_IP", 20, 1, 100000); err != nil {
		return nil, err
	}
	if c.HostedSubmitsPerSource, err = intVar(getenv, "HOSTED_SUBMITS_PER_SOURCE", 10, 1, 100000); err != nil {
		return nil, err
	}
	if c.APIKeyCacheTTL, err = durationIn(getenv, "API_KEY_CACHE_TTL", 30*time.Second,
		0, 10*time.Minute, "0 (off) to 10m such as 30s"); err != nil {
		return nil, err
	}
	if c.DashboardIdleTimeout, err = durationIn(getenv, "DASHBOARD_IDLE_TIMEOUT", 30*time.Minute,
		time.Minute, 24*time.Hour, "1m to 24h such as 30m"); err != nil {
		return nil, err
	}
	if c.DashboardSessionMaxAge, err = durationIn(getenv, "DASHBOARD_SESSION_MAX_AGE", 12*time.Hour,
		time.Minute, 30*24*time.Hour, "1m to 720h such as 12h"); err != nil {
		return nil, err
	}
	if c.SignInAttemptsPerEmail, err = intVar(getenv, "SIGNIN_ATTEMPTS_PER_EMAIL", 5, 1, 100000); err != nil {
		return nil, err
	}
	if c.SignInSlowdown, err = durationVar(getenv, "SIGNIN_SLOWDOWN", time.Second); err != nil {
		return nil, err
	}
	if c.SignInAttemptsPerIP, err = intVar(getenv, "SIGNIN_ATTEMPTS_PER_IP", 20, 1, 100000); err != nil {
		return nil, err
	}
	maxAmount := orDefault(getenv("PAYMENT_MAX_AMOUNT"), "10000.00")
	if c.PaymentMaxCents, _ = money.ParseCents(maxAmount); c.PaymentMaxCents <= 0 {
		return nil, fmt.Errorf("PAYMENT_MAX_AMOUNT must be a positive amount like 10000.00, got %q", maxAmount)
	}
	if c.PaymentSettleDelay, err = durationVar(getenv, "PAYMENT_SETTLE_DELAY", 5*time.Second); err != nil {
		return nil, err
	}
	if c.MaxConnections, err = maxConnections(getenv); err != nil {
		return nil, err
	}
	c.PprofAddr = getenv("PPROF_ADDR")
	c.MetricsAddr = getenv("METRICS_ADDR")
	c.ACHODFIRouting = getenv("ACH_ODFI_ROUTING")
	c.ACHOutboxDir = orDefault(getenv("ACH_OUTBOX_DIR"), filepath.Join(c.DataDir, "ach-outbox"))
	c.ACHInboxDir = orDefault(getenv("ACH_INBOX_DIR"), filepath.Join(c.DataDir, "ach-inbox"))
	c.ACHSFTPURL, c.ACHSFTPKeyFile, c.ACHSFTPKnownHosts = getenv("ACH_SFTP_URL"), getenv("ACH_SFTP_KEY_FILE"), getenv("ACH_SFTP_KNOWN_HOSTS")
	c.AuditCheckpointFile = orDefault(getenv("AUDIT_CHECKPOINT_FILE"), filepath.Join(c.DataDir, "audit-checkpoints.jsonl"))
	c.ACHDestinationRouting = orDefault(getenv("ACH_DESTINATION_ROUTING"), c.ACHODFIRouting)
	c.ACHDestinationName = getenv("ACH_DESTINATION_NAME")
	c.ACHOriginName = getenv("ACH_ORIGIN_NAME")
	c.ACHCompanyName = getenv("ACH_COMPANY_NAME")
	c.ACHCompanyID = getenv("ACH_COMPANY_ID")
	if c.ACHMicroOffset, err = boolVar(getenv, "ACH_MICRO_OFFSET", true); err != nil {
		return nil, err
	}
	c.ACHOffsetAccount = getenv("ACH_OFFSET_ACCOUNT")
	if c.ACHSettlementAccount, err = settlementAccount(getenv, c.ACHODFIRouting, prod); err != nil {
		return nil, err
	}
	if c.ACHWindows, err = loadACHSchedule(getenv); err != nil {
		return nil, err
	}
	for _, p := range strings.Split(getenv("TRUSTED_PROXIES"), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, _, err := net.ParseCIDR(p); err != nil && net.ParseIP(p) == nil {
			return nil, fmt.Errorf("TRUSTED_PROXIES: %q is neither an IP address nor a CIDR", p)
		}
		c.TrustedProxies = append(c.TrustedProxies, p)
	}

	if err := c.loadKeys(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

// settlementAccount reads ACH_SETTLEMENT_ACCOUNT: an account number or
// IBAN of at most 34 characters (ISO 20022's limit for both).
func settlementAccount(getenv Getenv, odfi string, prod bool) (string, error) {
	v := strings.TrimSpace(getenv("ACH_SETTLEMENT_ACCOUNT"))
	switch {
	case v == "" && odfi != "" && prod:
		return "", errors.New("ACH_SETTLEMENT_ACCOUNT is required in production with ACH origination on (ACH_ODFI_ROUTING): " +
			"the account the bank settles the files on, as its camt.053 statements name it (the account number in <Othr><Id>, or the IBAN); " +
			"without it no statement can be reconciled")
	case v == "" && odfi != "":
		return "ODFI-" + odfi, nil
	case len(strings.Join(strings.Fields(v), "")) > 34:
		return "", errors.New("ACH_SETTLEMENT_ACCOUNT must be an account number or IBAN of at most 34 characters, as the bank's statements name the account")
	}
	return v, nil
}

// MetricsOnMainListener reports whether the service's own listener serves
// /metrics: only in development without METRICS_ADDR.
func (c *Config) MetricsOnMainListener() bool {
	return c.MetricsAddr == "" && c.Mode != Production
}

// BaseURL returns the configured public base address of env.
func (c *Config) BaseURL(env tenant.Environment) *url.URL {
	if env == tenant.Production {
		return c.ProductionBaseURL
	}
	return c.SandboxBaseURL
}

func (c *Config) loadKeys(getenv Getenv) error {
	vals := map[string]string{}
	var missing []string
	for _, name := range keyVars {
		if vals[name] = getenv(name); vals[name] == "" {
			missing = append(missing, name)
		}
	}
	if c.Mode == Production {
		if len(missing) > 0 {
			return fmt.Errorf("production mode needs explicit keys; missing: %s", strings.Join(missing, ", "))
		}
	} else if len(missing) > 0 {
		stored, err := developmentKeys(filepath.Join(c.DataDir, "keys.env"))
		if err != nil {
			return err
		}
		for name, v := range vals {
			if v == "" {
				vals[name] = stored[name]
			}
		}
	}

	var err error
	if c.AccountEncryptionKeys, err = parseKeyring(vals[varEncryption]); err != nil {
		return fmt.Errorf("%s: %w", varEncryption, err)
	}
	if c.FingerprintKey, err = parseKey(vals[varFingerprint], 32, 32); err != nil {
		return fmt.Errorf("%s: %w", varFingerprint, err)
	}
	if c.IdempotencyKey, err = parseKey(vals[varIdempotency], 32, 64); err != nil {
		return fmt.Errorf("%s: %w", varIdempotency, err)
	}
	if c.AuditKey, err = parseKey(vals[varAudit], 32, 64); err != nil {
		return fmt.Errorf("%s: %w", varAudit, err)
	}
	for _, part := range strings.Split(vals[varSession], ",") {
		k, err := parseKey(strings.TrimSpace(part), 32, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", varSession, err)
		}
		c.SessionKeys = append(c.SessionKeys, k)
	}
	return nil
}

// developmentKeys reads path as NAME=VALUE lines, generating the keys it
// lacks and writing it (mode 0600) when it does not exist yet or lacked
// one, so development data stays readable across runs and a data folder
// from before a new key gains it.
func developmentKeys(path string) (map[string]string, error) {
	stored := map[string]string{}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		stored = parseEnvFile(data)
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("read development keys: %w", err)
	}
	added := false
	for _, name := range keyVars {
		if stored[name] == "" {
			stored[name], added = generateKey(name), true
		}
	}
	if !added {
		return stored, nil
	}
	var b strings.Builder
	b.WriteString("# Development keys generated by fundsource. Never use them in production.\n")
	for _, name := range keyVars {
		fmt.Fprintf(&b, "%s=%s\n", name, stored[name])
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return nil, fmt.Errorf("write development keys: %w", err)
	}
	return stored, nil
}

// ReadEnvFile reads NAME=VALUE lines (comments with #); a missing file is empty.
func ReadEnvFile(path string) map[string]string {
	data, err := os.ReadFile(path)
	if err != nil {
		return map[string]string{}
	}
	return parseEnvFile(data)
}

func parseEnvFile(data []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if name, value, ok := strings.Cut(line, "="); ok {
			out[name] = value
		}
	}
	return out
}

func randomKey(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func parseKey(s string, minLen, maxLen int) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty key")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("not valid base64")
	}
	if len(b) < minLen || len(b) > maxLen {
		if minLen == maxLen {
			return nil, fmt.Errorf("key must be %d bytes, got %d", minLen, len(b))
		}
		return nil, fmt.Errorf("key must be %d to %d bytes, got %d", minLen, maxLen, len(b))
	}
	return b, nil
}

// parseKeyring parses "id:base64key,…"; ids are unique and non-empty.
func parseKeyring(s string) ([]Key, error) {
	var keys []Key
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || id == "" {
			return nil, errors.New("each entry must be id:base64key")
		}
		if seen[id] {
			return nil, fmt.Errorf("key id %q appears twice", id)
		}
		seen[id] = true
		k, err := parseKey(b64, 32, 32)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		keys = append(keys, Key{ID: id, Bytes: k})
	}
	return keys, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func baseURL(getenv Getenv, name, def string, prod bool) (*url.URL, error) {
	raw := getenv(name)
	if raw == "" {
		if prod {
			return nil, fmt.Errorf("%s is required in production", name)
		}
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("%s must be an absolute http(s) URL, got %q", name, raw)
	}
	if prod && u.Scheme != "https" {
		return nil, fmt.Errorf("%s must use https in production", name)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

func boolVar(getenv Getenv, name string, def bool) (bool, error) {
	raw := getenv(name)
	if raw == "" {
		return def, nil
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return false, fmt.Errorf("%s must be true or false, got %q", name, raw)
	}
	return v, nil
}

func rateVar(getenv Getenv, name string, def float64) (float64, error) {
	raw := getenv(name)
	if raw == "" {
		return def, nil
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s must be a number ≥ 0 (requests per second), got %q", name, raw)
	}
	return v, nil
}

func intVar(getenv Getenv, name string, def, lo, hi int) (int, error) {
	raw := getenv(name)
	if raw == "" {
		return def, nil
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%s must be a whole number from %d to %d, got %q", name, lo, hi, raw)
	}
	return v, nil
}

func durationVar(getenv Getenv, name string, def time.Duration) (time.Duration, error) {
	return durationIn(getenv, name, def, 10*time.Millisecond, time.Hour, "10ms to 1h such as 500ms or 2s")
}

// durationIn reads a duration from lo to hi; span says so in the error.
func durationIn(getenv Getenv, name string, def, lo, hi time.Duration, span string) (time.Duration, error) {
	raw := getenv(name)
	if raw == "" {
		return def, nil
	}
	v, err := time.ParseDuration(raw)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%s must be a duration from %s, got %q", name, span, raw)
	}
	return v, nil
}

// DefaultMemoryLimit is the soft memory limit TuneGC sets when GOMEMLIMIT
// is unset.
const DefaultMemoryLimit = 256 << 20

// The default of MAX_CONNECTIONS: half of the memory limit at
// connBudget a connection, from minConnections to maxConnectionsCeiling.
const (
	connBudget            = 64 << 10
	minConnections        = 128
	maxConnectionsCeiling = 65536
	unlimitedMemory       = 4 << 30 // what GOMEMLIMIT=off counts as
)

// maxConnections reads MAX_CONNECTIONS, or sizes it to GOMEMLIMIT.
func maxConnections(getenv Getenv) (int, error) {
	limit, err := memoryLimit(getenv("GOMEMLIMIT"))
	if err != nil {
		return 0, err
	}
	def := int(min(max(limit/2/connBudget, minConnections), maxConnectionsCeiling))
	return intVar(getenv, "MAX_CONNECTIONS", def, 1, 1000000)
}

// memoryLimit reads GOMEMLIMIT as the runtime does: a number of bytes with
// an optional B, KiB, MiB, GiB or TiB suffix, or off.
func memoryLimit(raw string) (int64, error) {
	raw = strings.TrimSpace(raw)
	switch raw {
	case "":
		return DefaultMemoryLimit, nil
	case "off":
		return unlimitedMemory, nil
	}
	num, unit := raw, int64(1)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(raw, u.suffix) {
			num, unit = strings.TrimSuffix(raw, u.suffix), u.size
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("GOMEMLIMIT must be a number of bytes with an optional B, KiB, MiB, GiB or TiB suffix, or off, got %q", raw)
	}
	return n * unit, nil
}

// TuneGC sets Go's collector for a long-running process, unless the operator
// set GOGC or GOMEMLIMIT (the runtime reads them from the real environment).
// The server's live heap is small, about 10 MB under 'make bench', so the
// default GOGC=100 collects after every 10 MB allocated, many times a second
// under load. At 400 the heap may grow to about five times the live heap,
// and the soft limit caps it whatever the load: less CPU goes to the
// collector per request.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
}
