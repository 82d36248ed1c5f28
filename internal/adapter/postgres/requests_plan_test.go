package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
)

// TestTheRequestLogIsKeyedByTime: the request log's key leads with the
// time, so rows with random request ids land at its right edge, and the
// key, read backwards, serves the newest-first page with and without a
// filter; no other index of the table is left to write.
func TestTheRequestLogIsKeyedByTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := poolConn(t)
	var key []string
	if err := conn.SelectContext(ctx, &key, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = 'api_requests'::regclass AND i.indisprimary
		ORDER BY array_position(i.indkey::int2[], a.attnum)`); err != nil {
		t.Fatal(err)
	}
	if want := []string{"merchant_id", "environment", "created_at", "id"}; len(key) != len(want) ||
		key[0] != want[0] || key[1] != want[1] || key[2] != want[2] || key[3] != want[3] {
		t.Errorf("api_requests' primary key is %v, want %v", key, want)
	}
	var btrees []string
	if err := conn.SelectContext(ctx, &btrees, `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_am am ON am.oid = c.relam WHERE i.indrelid = 'api_requests'::regclass AND am.amname = 'btree'`); err != nil {
		t.Fatal(err)
	}
	if len(btrees) != 1 {
		t.Errorf("api_requests has B-tree indexes %v, want its key alone", btrees)
	}
	execAll(t, conn,
		`INSERT INTO api_requests (merchant_id, environment, id, created_at, method, path, status, latency_us)
		 SELECT 'mer_' || (i % 20), 'sandbox', 'req_' || md5(i::text), now() - i * interval '1 second', 'GET', '/v2/customers', 200, 100
		 FROM generate_series(1, 20000) i`,
		`ANALYZE api_requests`)
	since := time.Now().Add(-7 * 24 * time.Hour)
	for _, c := range []struct {
		name   string
		method string
		class  int
		id     string
	}{{"unfiltered", "", 0, ""}, {"by method and class", "GET", 2, ""}, {"by request id", "", 0, "req_" + "x"}} {
		plan := explainJSON(t, conn, postgres.ListRequests, "mer_3", "sandbox", "infinity", "", 26, since, c.method, c.class, c.id)
		var indexes []string
		walkPlan(t, plan, func(n node) {
			if n.Index != "" {
				indexes = append(indexes, n.Index)
			}
			if n.Relation == "api_requests" && n.Type == "Seq Scan" {
				t.Errorf("%s: the page scans api_requests whole\n%s", c.name, plan)
			}
		})
		if len(indexes) != 1 || indexes[0] != "api_requests_pkey" {
			t.Errorf("%s: the page reads api_requests through %v, want api_requests_pkey\n%s", c.name, indexes, plan)
		}
	}
}

// TestTheRequestLogsBatchesAreReadByTheirKey: a chunk of the request
// log's batches is read backwards through their key, from the cursor
// down, and never scans the table.
func TestTheRequestLogsBatchesAreReadByTheirKey(t *testing.T) {
	t.Parallel()
	conn := poolConn(t)
	execAll(t, conn,
		`INSERT INTO api_request_batches (merchant_id, environment, first_at, last_at, entries, body)
		 SELECT 'mer_' || (i % 20), 'sandbox', now() - i * interval '1 second', now() - i * interval '1 second' + interval '0.5 second',
		        2, decode(md5(i::text), 'hex')
		 FROM generate_series(1, 20000) i`,
		`ANALYZE api_request_batches`)
	since := time.Now().Add(-7 * 24 * time.Hour)
	for _, before := range []string{"infinity", time.Now().Add(-time.Hour).Format(time.RFC3339)} {
		plan := explainJSON(t, conn, postgres.PageBatches, "mer_3", "sandbox", before, since, "infinity", int64(1<<62), 8)
		var indexes []string
		walkPlan(t, plan, func(n node) {
			if n.Index != "" {
				indexes = append(indexes, n.Index)
			}
			if n.Relation == "api_request_batches" && n.Type == "Seq Scan" {
				t.Errorf("before %s: the chunk scans api_request_batches whole\n%s", before, plan)
			}
		})
		if len(indexes) != 1 || indexes[0] != "api_request_batches_pkey" {
			t.Errorf("before %s: the chunk reads through %v, want api_request_batches_pkey\n%s", before, indexes, plan)
		}
	}
}
