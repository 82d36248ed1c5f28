// Package migrations embeds the goose SQL migrations. Never edit a migration
// that has landed; add a new one.
//
// Migrations expand, then contract. A deploy migrates first and rolls the
// processes after, so the previous release's binary serves on the new
// schema (during the migration, and beside the new binary until the last
// process is replaced; a rollback runs it there too). A migration may add
// tables, indexes (CONCURRENTLY on large tables) and columns that are
// nullable or have a default; it must not drop, rename, retype or
// constrain more strictly anything the previous release reads or writes.
// Those changes wait for the release after the one whose code stops using
// them: a rename is add the new column, write both and backfill, read the
// new one, and only then drop the old. 'fundsource-lab upgrade' (make
// chaos) enforces it by running the commit before the newest migration
// against the newest schema.
//
// Merchant-scoped tables lead with (merchant_id, environment) in their
// primary keys, ready for sharding by merchant; the account-number
// registry that enforces uniqueness across merchants is its own small
// table. goose applies the files under a PostgreSQL session lock, so
// several processes can start at once.
package migrations

import "embed"

// FS holds the *.sql migration files.
//
//go:embed *.sql
var FS embed.FS
