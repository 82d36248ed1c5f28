package paging

import "testing"

func TestParse(t *testing.T) {
	for _, c := range []struct {
		limit string
		want  int
		ok    bool
	}{{"", 10, true}, {"1", 1, true}, {"100", 100, true}, {"0", 0, false}, {"101", 0, false}, {"-5", 0, false}, {"1.5", 0, false}, {"x", 0, false}} {
		p, err := Parse(c.limit, "")
		if (err == nil) != c.ok || (c.ok && p.Limit != c.want) {
			t.Errorf("Parse(%q) = %+v, %v; want limit %d ok=%v", c.limit, p, err, c.want, c.ok)
		}
	}
	items, more := Trim([]int{1, 2, 3}, Page{Limit: 2})
	if len(items) != 2 || !more {
		t.Errorf("Trim = %v, %v", items, more)
	}
	items, more = Trim([]int{1, 2}, Page{Limit: 2})
	if len(items) != 2 || more {
		t.Errorf("Trim exact = %v, %v", items, more)
	}
}
