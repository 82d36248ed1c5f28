package surface

import (
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestClientNetwork: IPv4 clients are counted by address, IPv6 clients by
// their /64, so one host cannot rotate through its network's addresses.
func TestClientNetwork(t *testing.T) {
	for _, c := range []struct{ remote, want string }{
		{"192.0.2.10:5000", "192.0.2.10"},
		{"[::ffff:192.0.2.10]:5000", "192.0.2.10"},
		{"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:443", "2001:db8:1:3::/64"},
	} {
		ctx, _ := gin.CreateTestContext(httptest.NewRecorder())
		ctx.Request = httptest.NewRequest("GET", "/", nil)
		ctx.Request.RemoteAddr = c.remote
		if got := ClientNetwork(ctx); got != c.want {
			t.Errorf("ClientNetwork(%s) = %q, want %q", c.remote, got, c.want)
		}
	}
}
