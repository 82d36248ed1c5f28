// Package migrations embeds the goose SQL migrations. Never edit a migration
// that has landed; add a new one.
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
