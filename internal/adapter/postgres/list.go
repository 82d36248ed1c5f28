package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// endOfTime sorts after every stored row: the cursor of a first page.
var endOfTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// list runs a keyset-paginated query whose parameters are ($1 merchant,
// $2 environment, $3 cursor created_at, $4 cursor id, $5 limit, then extra), fetching
// p.Limit+1 rows so the caller can tell whether more follow. The cursor row
// is looked up in table within the scope; errs.NotFound when it is unknown.
// table is one of this package's constant table names, never user input.
func (q queries) list(ctx context.Context, dest any, query, table string, scope tenant.Scope, p paging.Page, extra ...any) error {
	at, id := endOfTime, ""
	if p.StartingAfter != "" {
		var cur struct {
			CreatedAt time.Time `db:"created_at"`
			ID        string    `db:"id"`
		}
		err := sqlx.GetContext(ctx, q.ex, &cur,
			`SELECT created_at, id FROM `+table+` WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
			scope.MerchantID, scope.Env, p.StartingAfter)
		if err != nil {
			return translate(err)
		}
		at, id = cur.CreatedAt, cur.ID
	}
	args := append([]any{scope.MerchantID, scope.Env, at, id, p.Limit + 1}, extra...)
	return translate(sqlx.SelectContext(ctx, q.ex, dest, query, args...))
}
