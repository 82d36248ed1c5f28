package funding

import "time"

// Ownership results.
const (
	OwnershipMatch       = "match"
	OwnershipPartial     = "partial"
	OwnershipMismatch    = "mismatch"
	OwnershipUnavailable = "unavailable"
)

// OwnerScores are the provider's scores (0–100) of a customer's name and
// email against the owner of a processor token's account; -1 when the
// provider gave none.
type OwnerScores struct {
	Name  int
	Email int
}

// Ownership is the ownership check of a source linked through a
// processor token: the result follows the name score (70 and above
// match, 50–69 partial, below 50 mismatch); unavailable when the provider
// could not say, which never fails a link under the flag policy.
type Ownership struct {
	Result     string    `json:"result"`
	NameScore  *int      `json:"name_score"`
	EmailScore *int      `json:"email_score"`
	CheckedAt  time.Time `json:"checked_at"` // UTC
}

// OwnershipOf is the ownership check of scores at now.
func OwnershipOf(sc OwnerScores, now time.Time) Ownership {
	o := Ownership{Result: OwnershipUnavailable, CheckedAt: now.UTC()}
	if sc.Email >= 0 {
		e := sc.Email
		o.EmailScore = &e
	}
	if sc.Name < 0 {
		return o
	}
	n := sc.Name
	o.NameScore = &n
	switch {
	case n >= 70:
		o.Result = OwnershipMatch
	case n >= 50:
		o.Result = OwnershipPartial
	default:
		o.Result = OwnershipMismatch
	}
	return o
}
