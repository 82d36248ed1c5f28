# fundsource — the two commands are `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/fundsource
SRC   := cmd internal web templates static migrations

.PHONY: run test bench build fmt-check vet templ-check postgres fuzz

## run: private PostgreSQL under .data/ (unless DATABASE_URL is set), migrate, demo merchant, serve on :8080
run: build
	@if [ -z "$$DATABASE_URL" ]; then $(MAKE) --no-print-directory postgres; fi
	./$(BIN) dev

## test: formatting, vet, generated templ output, and every test against a real PostgreSQL
test: fmt-check vet templ-check
	@if [ -z "$$TEST_DATABASE_URL" ]; then $(MAKE) --no-print-directory postgres; fi
	$(GO) test -count=1 ./...

## bench: the benchmark suite
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

build:
	$(GO) build -o $(BIN) ./cmd/fundsource

fmt-check:
	@out=$$(gofmt -l $(SRC)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Regenerating templ output must change nothing (generated files are committed).
templ-check:
	$(GO) tool templ generate -path templates >/dev/null 2>&1
	@if [ -d .git ] && [ -n "$$(git status --porcelain -- templates)" ]; then \
		echo "templ output is stale: run 'go tool templ generate' and commit"; git status --short -- templates; exit 1; fi

## fuzz: run each fuzz target briefly
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzDecode -fuzztime=30s ./web
	$(GO) test -run='^$$' -fuzz=FuzzParseSecretKey -fuzztime=15s ./internal/merchant
	$(GO) test -run='^$$' -fuzz=FuzzParseCents -fuzztime=30s ./internal/funding
	$(GO) test -run='^$$' -fuzz=FuzzValidChecksum -fuzztime=30s ./internal/routing

# PostgreSQL's server binaries: installed from Debian's packages when missing
# and we are root; otherwise say exactly what to install.
postgres:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's postgresql package"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null; \
	else \
		echo "PostgreSQL is not installed. Install it with: sudo apt-get install -y postgresql"; \
		echo "(or set DATABASE_URL / TEST_DATABASE_URL to an existing server)"; exit 1; \
	fi
