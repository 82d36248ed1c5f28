package bench

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/lab"
	"github.com/fundsource/fundsource/internal/postgres"
	"github.com/fundsource/fundsource/web"
)

// ServeBare is 'fundsource-lab bare-get': the least an HTTP server in Go
// must do to answer a funding source's GET, run by the bench as a process
// of its own like the real server, on a pool like the server's (its
// statements prepared). GET /source/{id} reads the source's row with the
// server's own statement and answers its columns as a JSON object; GET
// /plain/{id} runs the bench's plain primary-key SELECT and answers its
// one column the same way; /readyz answers 200. Nothing else: no router,
// middleware, authentication, rate limit, log, scan into a struct or API
// view. Their rates are floors for the real GET's on the same machine.
func ServeBare(ctx context.Context, args []string, stdio lab.IO) error {
	fs := flag.NewFlagSet("bare-get", flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve")
	dsn := fs.String("database-url", "", "PostgreSQL URL")
	merchant := fs.String("merchant", "", "the sources' merchant id")
	env := fs.String("env", "sandbox", "the sources' environment")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", lab.ErrUsage, err)
	}
	db, err := postgres.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	return web.ServeUntil(ctx, ln, bareGet(db.SQL().DB, *merchant, *env))
}

// plainSelect is the plain primary-key SELECT of the bench's loop.
const plainSelect = `SELECT payload FROM bench_plain WHERE id = $1`

func bareGet(db *sql.DB, merchant, env string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			w.WriteHeader(http.StatusOK)
			return
		}
		var rows *sql.Rows
		var err error
		if id, ok := strings.CutPrefix(r.URL.Path, "/source/"); ok {
			rows, err = db.QueryContext(r.Context(), postgres.SourceQuery, merchant, env, id)
		} else if id, ok := strings.CutPrefix(r.URL.Path, "/plain/"); ok {
			rows, err = db.QueryContext(r.Context(), plainSelect, id)
		} else {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil || !rows.Next() {
			http.NotFound(w, r)
			return
		}
		vals := make([]sql.RawBytes, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out := make(map[string]string, len(cols))
		for i, v := range vals {
			s := string(v)
			if !utf8.ValidString(s) {
				s = hex.EncodeToString(v)
			}
			out[cols[i]] = s
		}
		body, _ := json.Marshal(out)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
}
