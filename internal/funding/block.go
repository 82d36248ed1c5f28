package funding

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// BlockNOCUnapplicable is the block code of a source a bank's notification
// of change could not correct (its corrected data invalid, or its account
// number another source's): the source's data is known to be wrong and
// cannot be fixed from here, so nothing more is debited until the
// merchant, having fixed the account with the customer, unblocks it.
const BlockNOCUnapplicable = "noc_unapplicable"

// BlockTx blocks source id with code and reason in the caller's
// transaction tx, as a return's block does, and funding_source.blocked
// fires; what the block does to the source's payments is the caller's
// (package consequence). It reports false, changing nothing,
// for a source removed or blocked already.
func (s *Service) BlockTx(ctx context.Context, tx Store, scope tenant.Scope, id, code, reason string) (bool, error) {
	src, err := tx.SourceForUpdate(ctx, scope, id)
	if err != nil || src.Removed || src.Block != nil {
		return false, err
	}
	src.Block = &Block{Code: code, Reason: reason, BlockedAt: s.now(ctx).UTC()}
	if err := tx.SetBlock(ctx, src); err != nil {
		return false, fmt.Errorf("block source %s: %w", src.ID, err)
	}
	return true, s.record(ctx, tx, src, event.FundingSourceBlocked, src.Status)
}
