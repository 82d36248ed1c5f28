package postgres

import (
	"context"

	"database/sql"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/errs"
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
