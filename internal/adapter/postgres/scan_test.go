package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
)

// TestTheSourceScanMatchesItsColumns: the source read alone scans each
// column into the field of its name, in the statement's order.
func TestTheSourceScanMatchesItsColumns(t *testing.T) {
	t.Parallel()
	conn := poolConn(t)
	rows, err := conn.QueryContext(context.Background(), postgres.SelectSource, "mer_a", "sandbox", "fs_1")
	if err != nil {
		t.Fatal(err)
	}
	cols, err := rows.Columns()
	rows.Close()
	if err != nil {
		t.Fatal(err)
	}
	if tags := postgres.SourceScanTags(); !slices.Equal(cols, tags) {
		t.Errorf("the scan's fields are\n%v\nthe statement's columns\n%v", tags, cols)
	}
}
