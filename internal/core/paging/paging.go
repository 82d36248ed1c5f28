// Package paging is the cursor pagination of every list endpoint: newest
// first, limit 1–100 (default 10), starting_after an object id.
package paging

import (
	"strconv"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// Limits of a page.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// Page asks for up to Limit items older than the item StartingAfter ("" for
// the newest).
type Page struct {
	Limit         int
	StartingAfter string
}

// Parse validates the query parameters limit and starting_after.
func Parse(limit, startingAfter string) (Page, error) {
	p := Page{Limit: DefaultLimit, StartingAfter: startingAfter}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > MaxLimit {
			return Page{}, errs.Invalid("limit", "limit must be a whole number from 1 to 100")
		}
		p.Limit = n
	}
	if len(startingAfter) > 100 {
		return Page{}, errs.Invalid("starting_after", "starting_after is not a known object id")
	}
	return p, nil
}

// UnknownCursor is the error for a starting_after that names no object of the list.
func UnknownCursor() error {
	return errs.Invalid("starting_after", "starting_after is not a known object id")
}

// Result finishes a list read from a store that fetched p.Limit+1 items and
// answers errs.NotFound for an unknown cursor: it turns that into the
// starting_after error and trims the page, reporting whether more follow.
func Result[T any](items []T, err error, p Page) ([]T, bool, error) {
	if errs.Is(err, errs.NotFound) {
		return nil, false, UnknownCursor()
	}
	if err != nil {
		return nil, false, err
	}
	items, more := Trim(items, p)
	return items, more, nil
}

// Trim cuts a result fetched with Limit+1 rows down to Limit and reports
// whether there were more.
func Trim[T any](items []T, p Page) ([]T, bool) {
	if len(items) > p.Limit {
		return items[:p.Limit], true
	}
	return items, false
}
