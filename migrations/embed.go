// Package migrations embeds the goose SQL migrations. Never edit a migration
// that has landed; add a new one.
package migrations

import "embed"

// FS holds the *.sql migration files.
//
//go:embed *.sql
var FS embed.FS
