package dashboard

import "testing"

func TestUSDGroupsThousands(t *testing.T) {
	for in, want := range map[string]string{
		"0.01": "$0.01", "999.99": "$999.99", "1000.00": "$1,000.00", "12345.67": "$12,345.67",
		"123456.00": "$123,456.00", "1234567.89": "$1,234,567.89", "-2500.01": "-$2,500.01",
	} {
		if got := usd(in); got != want {
			t.Errorf("usd(%q) = %q, want %q", in, got, want)
		}
	}
}
