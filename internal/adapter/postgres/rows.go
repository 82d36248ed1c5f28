package postgres

import (
	"context"

	"database/sql"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// oneRow checks that an UPDATE touched a row; otherwise it returns an error
// with code none (errs.NotFound or errs.Conflict, as the caller means it).
func oneRow(res sql.Result, err error, none errs.Code) error {
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return errs.New(none, "no matching row")
	}
	return nil
}

// changed is oneRow for a count of changed rows.
func changed(n int64, err error) error {
	if err == nil && n == 0 {
		return errs.New(errs.NotFound, "no matching row")
	}
	return err
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// getOne reads one row of q into R and converts it to its domain value.
func getOne[R interface{ domain() T }, T any](ctx context.Context, q sqlx.QueryerContext, query string, args ...any) (T, error) {
	var r R
	if err := sqlx.GetContext(ctx, q, &r, query, args...); err != nil {
		var zero T
		return zero, translate(err)
	}
	return r.domain(), nil
}

// mapRows converts scanned rows to domain values.
func mapRows[R, T any](rows []R, f func(R) T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// deref is the value of a nullable column, "" for NULL.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// likeEscaper makes text match itself literally in a LIKE pattern.
var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

// contains is the ILIKE pattern of values containing text.
func contains(text string) string {
	return "%" + likeEscaper.Replace(text) + "%"
}

// byID keys a one-row statement on customers, funding_sources or payments
// ($1 merchant, $2 environment, $3 id). Ids are unique across merchants and
// environments, so the row is found by its id alone, through the table's
// unique index on id, and the tenancy check is a filter no index can serve:
// the planner has one index to choose, with or without statistics. (Keyed
// by all three columns, a table never analyzed was read through an index
// on (merchant_id, environment, …) that matched the merchant's every row.)
const byID = `id = $3 AND (merchant_id, environment) IS NOT DISTINCT FROM ($1::text, $2::text)`
