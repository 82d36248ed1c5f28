package bench

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/lab/rig"
	"github.com/fundsource/fundsource/internal/wiring"
	"github.com/fundsource/fundsource/web"
)

// ServeBare is 'fundsource-lab bare': the least an HTTP server in Go must
// do to answer a funding source's GET or creation, run by the bench as a
// process of its own like the real server, with the service wired as the
// bench wires it (the same configuration and database, a pool like the
// server's, its statements prepared):
//   - GET /source/{id} reads the source with the server's own store
//     method and statement and answers it as a JSON object;
//   - GET /plain/{id} runs the bench's plain primary-key SELECT and answers
//     its one column the same way;
//   - POST /create does the direct creation load's work on the request's
//     body and Idempotency-Key and answers the stored response;
//   - /readyz answers 200.
//
// Nothing else: no router, middleware, authentication, rate limit, log,
// scan into a struct or API view. Their rates are floors for the real
// requests' on the same machine.
func ServeBare(ctx context.Context, args []string, stdio rig.IO) error {
	fs := flag.NewFlagSet("bare", flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve")
	dataDir := fs.String("data-dir", "", "the bench's DATA_DIR (its keys)")
	dsn := fs.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL (default $DATABASE_URL, which keeps a password off the command line)")
	merchant := fs.String("merchant", "", "the merchant id")
	env := fs.String("env", "sandbox", "the environment")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", rig.ErrUsage, err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	return rig.Wire(ctx, map[string]string{"DATA_DIR": *dataDir, "DATABASE_URL": *dsn}, func(svc *wiring.Services, raw *sqlx.DB) error {
		// Prepared once per connection, as the server's statements are.
		plain, err := raw.PrepareContext(ctx, plainSelect)
		if err != nil {
			return err
		}
		defer plain.Close()
		return web.ServeUntil(ctx, ln, bare(svc, plain, tenant.Scope{MerchantID: *merchant, Env: tenant.Environment(*env)}))
	})
}

// plainSelect is the plain primary-key SELECT of the bench's loop.
const plainSelect = `SELECT payload FROM bench_plain WHERE id = $1`

func bare(svc *wiring.Services, plain *sql.Stmt, scope tenant.Scope) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		var err error
		if id, ok := strings.CutPrefix(r.URL.Path, "/source/"); ok {
			var src funding.Source
			if src, err = svc.DB.SourceAnswer(r.Context(), scope, id); err == nil {
				body, err = json.Marshal(src)
			}
		} else if id, ok := strings.CutPrefix(r.URL.Path, "/plain/"); ok {
			body, err = row(r.Context(), plain, id)
		} else if r.URL.Path == "/create" {
			if body, err = io.ReadAll(r.Body); err == nil {
				body, err = createDirect(r.Context(), svc, scope, body, r.Header.Get("Idempotency-Key"))
			}
		} else if r.URL.Path == "/readyz" {
			return
		} else {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
}

// row runs stmt and answers its one row's columns as a JSON object
// (bytes that are not UTF-8 in hex).
func row(ctx context.Context, stmt *sql.Stmt, args ...any) ([]byte, error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		return nil, cmp.Or(rows.Err(), sql.ErrNoRows)
	}
	vals := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(cols))
	for i, v := range vals {
		s := string(v)
		if !utf8.ValidString(s) {
			s = hex.EncodeToString(v)
		}
		out[cols[i]] = s
	}
	return json.Marshal(out)
}
