package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"

	"github.com/lib/pq"
	"github.com/pressly/goose/v3/lock"
)

// invalidIndexes are the schema's indexes that PostgreSQL keeps but does
// not use: what an interrupted CREATE INDEX CONCURRENTLY (a killed
// migrator, a failover, a canceled statement) or REINDEX CONCURRENTLY
// leaves behind. A migration that reruns CREATE INDEX CONCURRENTLY IF NOT
// EXISTS skips such an index, so the schema would miss it silently. An
// index still being built is left alone.
const invalidIndexes = `
SELECT c.relname AS name
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE NOT i.indisvalid AND n.nspname = current_schema()
  AND NOT EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = i.indexrelid)
ORDER BY c.relname`

// reindexLeftover names the copies REINDEX CONCURRENTLY makes: an invalid
// one is the remains of an interrupted rebuild, whose original survives.
var reindexLeftover = regexp.MustCompile(`_cc(new|old)[0-9]*$`)

// rebuildInvalidIndexes rebuilds every invalid index (and drops the
// leftovers of interrupted rebuilds), under the migrators' session lock so
// it never takes an index another migrator is building for one left
// behind. A unique index whose table holds duplicates fails to rebuild:
// the migration fails and says so, rather than run without the index.
func rebuildInvalidIndexes(ctx context.Context, x *sql.DB, locker lock.SessionLocker) (err error) {
	conn, err := x.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := locker.SessionLock(ctx, conn); err != nil {
		return err
	}
	defer func() {
		if uerr := locker.SessionUnlock(context.WithoutCancel(ctx), conn); uerr != nil {
			err = errors.Join(err, uerr)
		}
	}()
	rows, err := conn.QueryContext(ctx, invalidIndexes)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range names {
		stmt := "REINDEX INDEX CONCURRENTLY " + pq.QuoteIdentifier(n)
		if reindexLeftover.MatchString(n) {
			stmt = "DROP INDEX CONCURRENTLY IF EXISTS " + pq.QuoteIdentifier(n)
		}
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("rebuild invalid index %s: %w", n, err)
		}
	}
	return nil
}
