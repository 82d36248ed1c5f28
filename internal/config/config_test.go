package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestDevelopmentGeneratesKeysOnceAndReusesThem(t *testing.T) {
	dir := t.TempDir()
	c1, err := Load(env(map[string]string{"DATA_DIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c1.AccountEncryptionKeys) != 1 || len(c1.AccountEncryptionKeys[0].Bytes) != 32 || len(c1.FingerprintKey) != 32 || len(c1.SessionKeys) != 1 ||
		len(c1.IdempotencyKey) != 32 || string(c1.IdempotencyKey) == string(c1.FingerprintKey) ||
		len(c1.AuditKey) != 32 || string(c1.AuditKey) == string(c1.IdempotencyKey) || c1.AuditCheckpointFile != filepath.Join(dir, "audit-checkpoints.jsonl") {
		t.Fatalf("generated keys have wrong shape: %+v", c1)
	}
	st, err := os.Stat(filepath.Join(dir, "keys.env"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("keys.env: %v, mode %v", err, st.Mode())
	}
	c2, err := Load(env(map[string]string{"DATA_DIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	if string(c2.FingerprintKey) != string(c1.FingerprintKey) || string(c2.AccountEncryptionKeys[0].Bytes) != string(c1.AccountEncryptionKeys[0].Bytes) ||
		string(c2.AuditKey) != string(c1.AuditKey) {
		t.Error("second load generated new keys instead of reusing keys.env")
	}
	if c1.Mode != Development || c1.ListenAddr != "127.0.0.1:8080" || c1.RateLimitSandbox != 25 || c1.RateLimitProduction != 100 || !c1.WebhookAllowPrivateTargets ||
		c1.WebhookInFlight != 256 || c1.WebhookPerEndpoint != 8 ||
		c1.WebhookTimeout != 10*time.Second || c1.WebhookDisableAfter != 72*time.Hour || c1.WebhookPollInterval != time.Second ||
		c1.DashboardIdleTimeout != 30*time.Minute || c1.DashboardSessionMaxAge != 12*time.Hour || c1.SignInAttemptsPerEmail != 5 ||
		!c1.ProviderSimulator || c1.PlaidBaseURL != "http://127.0.0.1:8090" || c1.PlaidClientID != SimServiceClientID {
		t.Errorf("development defaults: %+v", c1)
	}
}

// TestDevelopmentKeysGainANewKey: a data folder from before IDEMPOTENCY_KEY
// keeps its keys and gains that one.
func TestDevelopmentKeysGainANewKey(t *testing.T) {
	dir := t.TempDir()
	k := strings.Repeat("B", 43) + "="
	old := "ACCOUNT_ENCRYPTION_KEYS=k1:" + k + "\nFINGERPRINT_KEY=" + k + "\nSESSION_KEYS=" + k + "\n"
	if err := os.WriteFile(filepath.Join(dir, "keys.env"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c1, err := Load(env(map[string]string{"DATA_DIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Load(env(map[string]string{"DATA_DIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c1.IdempotencyKey) != 32 || string(c1.IdempotencyKey) != string(c2.IdempotencyKey) ||
		len(c1.AuditKey) != 32 || string(c1.AuditKey) != string(c2.AuditKey) {
		t.Errorf("the new key was not generated once and kept")
	}
	if string(c1.FingerprintKey) != strings.Repeat("\x04\x10\x41", 10)+"\x04\x10" {
		t.Errorf("the existing fingerprint key changed: %x", c1.FingerprintKey)
	}
}

func TestProductionRefusesToStartWithoutKeys(t *testing.T) {
	base := map[string]string{
		"FUNDSOURCE_MODE":     "production",
		"DATABASE_URL":        "postgres://db/fundsource",
		"SANDBOX_BASE_URL":    "https://sandbox.api.example",
		"PRODUCTION_BASE_URL": "https://api.example",
		"HOSTED_BASE_URL":     "https://verify.example",
		"DATA_DIR":            t.TempDir(),
		"OFAC_SDN_FILE":       "/srv/ofac/sdn.csv",
	}
	if _, err := Load(env(base)); err == nil || !strings.Contains(err.Error(), "ROUTING_DIRECTORY_FILE") {
		t.Fatalf("production without ROUTING_DIRECTORY_FILE: %v", err)
	}
	base["ROUTING_DIRECTORY_FILE"] = filepath.Join(base["DATA_DIR"], "FedACHdir.txt")
	_, err := Load(env(base))
	if err == nil {
		t.Fatal("production started without keys")
	}
	for _, name := range []string{"ACCOUNT_ENCRYPTION_KEYS", "FINGERPRINT_KEY", "SESSION_KEYS", "IDEMPOTENCY_KEY", "AUDIT_KEY"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	if _, err := os.Stat(filepath.Join(base["DATA_DIR"], "keys.env")); !os.IsNotExist(err) {
		t.Error("production wrote development keys")
	}

	k := strings.Repeat("A", 43) + "=" // 32 zero bytes in base64
	base["ACCOUNT_ENCRYPTION_KEYS"] = "k2:" + k + ",k1:" + k
	base["FINGERPRINT_KEY"] = k
	base["SESSION_KEYS"] = k
	if _, err := Load(env(base)); err == nil || !strings.Contains(err.Error(), "IDEMPOTENCY_KEY") {
		t.Fatalf("production without IDEMPOTENCY_KEY: %v", err)
	}
	base["IDEMPOTENCY_KEY"] = k
	if _, err := Load(env(base)); err == nil || !strings.Contains(err.Error(), "AUDIT_KEY") {
		t.Fatalf("production without AUDIT_KEY: %v", err)
	}
	base["AUDIT_KEY"] = k
	delete(base, "OFAC_SDN_FILE")
	if _, err := Load(env(base)); err == nil || !strings.Contains(err.Error(), "OFAC_SDN_FILE") {
		t.Fatalf("production without OFAC_SDN_FILE: %v", err)
	}
	base["OFAC_SDN_FILE"] = "/srv/ofac/sdn.csv"
	c, err := Load(env(base))
	if err != nil {
		t.Fatalf("production with keys: %v", err)
	}
	if c.SanctionsFile != "/srv/ofac/sdn.csv" || c.SanctionsAltFile != "" {
		t.Errorf("sanctions files: %q %q", c.SanctionsFile, c.SanctionsAltFile)
	}
	if c.AccountEncryptionKeys[0].ID != "k2" || len(c.AccountEncryptionKeys) != 2 {
		t.Errorf("keyring = %+v, want k2 first", c.AccountEncryptionKeys)
	}
	if c.WebhookAllowPrivateTargets {
		t.Error("production allows private webhook targets by default")
	}
	if c.ProviderSimulator || c.PlaidBaseURL != "" || c.PlaidClientID != "" {
		t.Errorf("production defaults to the provider simulator: %q %q", c.PlaidBaseURL, c.PlaidClientID)
	}
}

func TestInvalidValuesAreRefused(t *testing.T) {
	good := strings.Repeat("A", 43) + "="
	cases := map[string]map[string]string{
		"unknown mode":       {"FUNDSOURCE_MODE": "staging"},
		"relative base url":  {"SANDBOX_BASE_URL": "sandbox.example"},
		"base url with user": {"HOSTED_BASE_URL": "http://u:p@example.com"},
		"negative rate":      {"RATE_LIMIT_SANDBOX": "-1"},
		"rate not a number":  {"RATE_LIMIT_PRODUCTION": "fast"},
		"bad bool":           {"WEBHOOK_ALLOW_PRIVATE_TARGETS": "perhaps"},
		"zero in flight":     {"WEBHOOK_INFLIGHT": "0"},
		"long timeout":       {"WEBHOOK_TIMEOUT": "1m"},
		"bad disable after":  {"WEBHOOK_DISABLE_AFTER": "soon"},
		"poll not duration":  {"WEBHOOK_POLL_INTERVAL": "5"},
		"poll too short":     {"WEBHOOK_POLL_INTERVAL": "1ms"},
		"short fingerprint":  {"FINGERPRINT_KEY": "AAAA"},
		"keyring without id": {"ACCOUNT_ENCRYPTION_KEYS": good},
		"duplicate key id":   {"ACCOUNT_ENCRYPTION_KEYS": "a:" + good + ",a:" + good},
		"not base64":         {"SESSION_KEYS": "!!!"},
		"http in production": {"FUNDSOURCE_MODE": "production", "DATABASE_URL": "x", "ROUTING_DIRECTORY_FILE": "d", "SANDBOX_BASE_URL": "http://a.example"},
		"production no db":   {"FUNDSOURCE_MODE": "production"},
		"zero hosted limit":  {"HOSTED_SUBMITS_PER_IP": "0"},
		"bad hosted limit":   {"HOSTED_SUBMITS_PER_SOURCE": "ten"},
		"bad proxy":          {"TRUSTED_PROXIES": "10.0.0.0/8, proxy.internal"},
		"zero max amount":    {"PAYMENT_MAX_AMOUNT": "0"},
		"bad max amount":     {"PAYMENT_MAX_AMOUNT": "1e6"},
		"bad settle delay":   {"PAYMENT_SETTLE_DELAY": "soon"},
		"relative rail url":  {"INSTANT_RAIL_URL": "rail.example/pacs"},
		"rail url with user": {"INSTANT_RAIL_URL": "https://u:p@rail.example/"},
		"http rail in prod":  {"FUNDSOURCE_MODE": "production", "DATABASE_URL": "x", "ROUTING_DIRECTORY_FILE": "d", "INSTANT_RAIL_URL": "http://rail.example/"},
		"alt without sdn":    {"OFAC_ALT_FILE": "alt.csv"},
	}
	for name, vars := range cases {
		t.Run(name, func(t *testing.T) {
			vars["DATA_DIR"] = t.TempDir()
			if _, err := Load(env(vars)); err == nil {
				t.Errorf("Load accepted %v", vars)
			}
		})
	}
}

func TestHostedLimitsAndTrustedProxies(t *testing.T) {
	c, err := Load(env(map[string]string{"DATA_DIR": t.TempDir(), "TRUSTED_PROXIES": " 10.0.0.0/8 ,192.0.2.7,",
		"HOSTED_SUBMITS_PER_SOURCE": "4"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.TrustedProxies, "|"); got != "10.0.0.0/8|192.0.2.7" {
		t.Errorf("TrustedProxies = %q", got)
	}
	if c.HostedSubmitsPerIP != 20 || c.HostedSubmitsPerSource != 4 {
		t.Errorf("hosted limits = %d per IP, %d per source; want 20 and 4", c.HostedSubmitsPerIP, c.HostedSubmitsPerSource)
	}
}

func TestDevelopmentBaseURLsFollowListenAddr(t *testing.T) {
	for listen, want := range map[string]string{"": "http://127.0.0.1:8080", "127.0.0.1:9090": "http://127.0.0.1:9090",
		":7070": "http://127.0.0.1:7070", "0.0.0.0:7071": "http://127.0.0.1:7071", "localhost:7072": "http://localhost:7072"} {
		c, err := Load(env(map[string]string{"DATA_DIR": t.TempDir(), "LISTEN_ADDR": listen}))
		if err != nil {
			t.Fatal(err)
		}
		for name, u := range map[string]string{"sandbox": c.SandboxBaseURL.String(), "production": c.ProductionBaseURL.String(), "hosted": c.HostedBaseURL.String()} {
			if u != want {
				t.Errorf("LISTEN_ADDR=%q: %s base = %s, want %s", listen, name, u, want)
			}
		}
	}
}

func TestInstantRailURL(t *testing.T) {
	c, err := Load(env(map[string]string{"DATA_DIR": t.TempDir()}))
	if err != nil || c.InstantRailURL != "" || !c.RailSimulator || c.RailSimAddr != "127.0.0.1:8091" {
		t.Fatalf("default: %+v, %v; want the rail simulator on 127.0.0.1:8091", c, err)
	}
	c, err = Load(env(map[string]string{"DATA_DIR": t.TempDir(), "INSTANT_RAIL_URL": "http://127.0.0.1:9/"}))
	if err != nil || c.RailSimulator || c.InstantRailURL != "http://127.0.0.1:9/" {
		t.Fatalf("set: %v, %v", c, err)
	}
	_, err = Load(env(map[string]string{"DATA_DIR": t.TempDir(), "INSTANT_RAIL_URL": "rail.example"}))
	if err == nil || !strings.Contains(err.Error(), "INSTANT_RAIL_URL") {
		t.Errorf("relative: %v, want an error naming INSTANT_RAIL_URL", err)
	}
}

// TestACHSettlementAccount: production with ACH origination on refuses to
// start without the settlement account, saying what it is; development
// defaults it to the local ACH network's; a value is kept as written, up
// to ISO 20022's 34 characters.
func TestACHSettlementAccount(t *testing.T) {
	k := strings.Repeat("A", 43) + "="
	prod := map[string]string{
		"FUNDSOURCE_MODE": "production", "DATABASE_URL": "postgres://db/fundsource", "DATA_DIR": t.TempDir(),
		"SANDBOX_BASE_URL": "https://sandbox.api.example", "PRODUCTION_BASE_URL": "https://api.example", "HOSTED_BASE_URL": "https://verify.example",
		"ACCOUNT_ENCRYPTION_KEYS": "k1:" + k, "FINGERPRINT_KEY": k, "SESSION_KEYS": k, "IDEMPOTENCY_KEY": k, "AUDIT_KEY": k,
		"OFAC_SDN_FILE": "/srv/ofac/sdn.csv", "ROUTING_DIRECTORY_FILE": "/srv/fed/FedACHdir.txt",
	}
	if c, err := Load(env(prod)); err != nil || c.ACHSettlementAccount != "" {
		t.Fatalf("production without ACH origination: %+v, %v", c, err)
	}
	prod["ACH_ODFI_ROUTING"] = "121042882"
	if _, err := Load(env(prod)); err == nil || !strings.Contains(err.Error(), "ACH_SETTLEMENT_ACCOUNT is required in production") ||
		!strings.Contains(err.Error(), "camt.053") {
		t.Fatalf("production with ACH origination and no settlement account: %v", err)
	}
	prod["ACH_SETTLEMENT_ACCOUNT"] = " NL91 ABNA 0417 1643 00 "
	if c, err := Load(env(prod)); err != nil || c.ACHSettlementAccount != "NL91 ABNA 0417 1643 00" {
		t.Fatalf("production with an IBAN: %+v, %v", c, err)
	}
	prod["ACH_SETTLEMENT_ACCOUNT"] = strings.Repeat("9", 34)
	if _, err := Load(env(prod)); err != nil {
		t.Errorf("34 characters: %v", err)
	}
	prod["ACH_SETTLEMENT_ACCOUNT"] = strings.Repeat("9", 35)
	if _, err := Load(env(prod)); err == nil || !strings.Contains(err.Error(), "ACH_SETTLEMENT_ACCOUNT") {
		t.Errorf("35 characters: %v", err)
	}
	dev := map[string]string{"DATA_DIR": t.TempDir(), "ACH_ODFI_ROUTING": "121042882"}
	if c, err := Load(env(dev)); err != nil || c.ACHSettlementAccount != "ODFI-121042882" {
		t.Errorf("development default: %+v, %v", c, err)
	}
	dev["ACH_SETTLEMENT_ACCOUNT"] = "000123456789"
	if c, err := Load(env(dev)); err != nil || c.ACHSettlementAccount != "000123456789" {
		t.Errorf("development with an account: %+v, %v", c, err)
	}
}

// TestMaxConnectionsFollowsTheMemoryLimit: the default is half the memory
// limit at 64 KiB a connection, from 128 to 65536; MAX_CONNECTIONS wins;
// a GOMEMLIMIT the runtime would not read is refused.
func TestMaxConnectionsFollowsTheMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		memlimit, max string
		want          int
	}{
		{"", "", 2048},          // 256 MiB / 2 / 64 KiB
		{"1GiB", "", 8192},      // 1 GiB / 2 / 64 KiB
		{"268435456", "", 2048}, // bytes
		{"16MiB", "", 128},      // the floor exactly
		{"15MiB", "", 128},      // below the floor
		{"8191MiB", "", 65528},  // just under the ceiling
		{"8193MiB", "", 65536},  // over it
		{"off", "", 32768},      // no limit counts as 4 GiB
		{"1GiB", "100", 100},    // set explicitly
		{"", "1", 1},            // the lowest
	} {
		cfg, err := Load(env(map[string]string{"DATA_DIR": t.TempDir(), "GOMEMLIMIT": c.memlimit, "MAX_CONNECTIONS": c.max}))
		if err != nil || cfg.MaxConnections != c.want {
			t.Errorf("GOMEMLIMIT=%q MAX_CONNECTIONS=%q: %d, %v; want %d", c.memlimit, c.max, cfg.MaxConnections, err, c.want)
		}
	}
	for _, bad := range []map[string]string{{"MAX_CONNECTIONS": "0"}, {"MAX_CONNECTIONS": "many"}, {"GOMEMLIMIT": "1GB"}, {"GOMEMLIMIT": "-1"}} {
		bad["DATA_DIR"] = t.TempDir()
		if _, err := Load(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
