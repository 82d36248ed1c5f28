package dashboard

import (
	"context"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// originatorLabels name an originator's status for people.
var originatorLabels = map[string]string{
	originator.Active:        "Active",
	originator.PendingReview: "Pending review",
	originator.Suspended:     "Suspended",
}

// originatorView is scope's originator for Settings; nil when the
// dashboard has no originators.
func (s *Surface) originatorView(ctx context.Context, scope tenant.Scope) (*view.OriginatorView, error) {
	if s.originators == nil {
		return nil, nil
	}
	o, err := s.originators.Get(ctx, scope)
	if err != nil {
		return nil, err
	}
	return &view.OriginatorView{Status: o.Status, StatusLabel: originatorLabels[o.Status], CompanyName: o.CompanyName,
		CompanyID: o.CompanyID, PerEntryDebit: o.Limits.PerEntryDebit, DailyDebit: o.Limits.DailyDebit,
		DailyCredit: o.Limits.DailyCredit, UsedDebit: o.Usage.Debits, UsedCredit: o.Usage.Credits, SameDay: o.SameDay}, nil
}
