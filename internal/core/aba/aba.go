// Package aba holds the ABA routing number's check-digit rule, the one
// fact about a routing number every package may need without a directory:
// the routing adapter (internal/adapter/routing) checks numbers with it
// before it looks them up, and the ACH originator checks its configured
// banks with it. It imports only the standard library.
package aba

// ValidChecksum reports whether rn is 9 ASCII digits with a correct ABA check
// digit: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10). All zeros
// pass that sum but name no bank (files use them as "no number"), so
// 000000000 is not valid.
func ValidChecksum(rn string) bool {
	if len(rn) != 9 || rn == "000000000" {
		return false
	}
	weights := [3]int{3, 7, 1}
	sum := 0
	for i := 0; i < 9; i++ {
		c := rn[i]
		if c < '0' || c > '9' {
			return false
		}
		sum += weights[i%3] * int(c-'0')
	}
	return sum%10 == 0
}
