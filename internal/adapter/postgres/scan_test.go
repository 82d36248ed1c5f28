package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
)

// TestTheSourceScanMatchesItsColumns: each read of a source that scans
// into fixed fields scans each column into the field of its name, in the
// statement's order.
func TestTheSourceScanMatchesItsColumns(t *testing.T) {
	t.Parallel()
	conn := poolConn(t)
	for query, tags := range postgres.SourceScans() {
		rows, err := conn.QueryContext(context.Background(), query, "mer_a", "sandbox", "fs_1")
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cols, tags) {
			t.Errorf("the scan's fields are\n%v\nthe statement's columns\n%v\n%s", tags, cols, query)
		}
	}
}
