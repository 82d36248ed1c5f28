package merchant

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

func TestParseSecretKey(t *testing.T) {
	body := strings.Repeat("a", ids.SecretLen)
	cases := []struct {
		key  string
		want tenant.Environment
		ok   bool
	}{
		{"sk_test_" + body, tenant.Sandbox, true},
		{"sk_live_" + body, tenant.Production, true},
		{ids.Secret("sk_test_"), tenant.Sandbox, true},
		{"pk_test_" + body, "", false},
		{"pk_live_" + body, "", false},
		{"sk_test_" + body[1:], "", false},
		{"sk_test_" + body + "a", "", false},
		{"sk_test_" + body[1:] + "-", "", false},
		{"sk_prod_" + body, "", false},
		{"", "", false},
	}
	for _, c := range cases {
		env, err := ParseSecretKey(c.key)
		if (err == nil) != c.ok || env != c.want {
			t.Errorf("ParseSecretKey(%q) = %q, %v; want %q, ok=%v", c.key, env, err, c.want, c.ok)
		}
		if err != nil && errs.CodeOf(err) != errs.Unauthorized {
			t.Errorf("ParseSecretKey(%q) code = %q, want unauthorized", c.key, errs.CodeOf(err))
		}
	}
}

func FuzzParseSecretKey(f *testing.F) {
	f.Add("sk_test_" + strings.Repeat("a", ids.SecretLen))
	f.Add("pk_live_x")
	f.Fuzz(func(t *testing.T, key string) {
		env, err := ParseSecretKey(key)
		if err == nil && !strings.HasPrefix(key, env.SecretPrefix()) {
			t.Fatalf("accepted %q as %s", key, env)
		}
		if err != nil && errs.CodeOf(err) != errs.Unauthorized {
			t.Fatalf("error without unauthorized code: %v", err)
		}
	})
}

// TestParseKeyHashesAsStored: a parsed key's environment is
// ParseSecretKey's and its hash is HashSecret's, the stored one; what
// ParseSecretKey refuses, ParseKey refuses.
func TestParseKeyHashesAsStored(t *testing.T) {
	for _, key := range []string{"sk_test_" + strings.Repeat("A", 43), "sk_live_" + strings.Repeat("z9", 21) + "Q",
		"pk_test_" + strings.Repeat("A", 43), "sk_test_short", ""} {
		env, err := ParseSecretKey(key)
		k, kerr := ParseKey(key)
		if (err == nil) != (kerr == nil) || (err != nil && err.Error() != kerr.Error()) {
			t.Fatalf("ParseKey(%q) error %v, ParseSecretKey %v", key, kerr, err)
		}
		if err == nil && (k.Env != env || !bytes.Equal(k.hash[:], HashSecret(key))) {
			t.Errorf("ParseKey(%q) = %s %x, want %s %x", key, k.Env, k.hash, env, HashSecret(key))
		}
	}
}
