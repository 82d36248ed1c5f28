# fundsource — the two commands are `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/fundsource
LAB   := bin/fundsource-lab
SRC   := cmd internal web templates static migrations
# playwright-go v0.5200.1 drives Chromium through playwright-core 1.52.0 exactly.
PLAYWRIGHT_VERSION := 1.52.0
export PLAYWRIGHT_DRIVER_PATH ?= $(CURDIR)/.playwright/driver-$(PLAYWRIGHT_VERSION)
# What tests run in Node: axe-core checks pages in Chromium; openapi-typescript
# and tsc check that the OpenAPI document types what clients read.
NODE_TOOLS := axe-core@4.11.0 openapi-typescript@7.13.0 typescript@5.9.3
export NODE_TOOLS_PATH ?= $(CURDIR)/.playwright/node-tools

.PHONY: run test bench chaos build fmt-check vet templ-check postgres autofailover sshd browser screenshots fuzz vuln

## run: private PostgreSQL under .data/ (unless DATABASE_URL is set), migrate, demo merchant, serve on :8080
run: build
	@if [ -z "$$DATABASE_URL" ]; then $(MAKE) --no-print-directory postgres; fi
	./$(BIN) dev

## test: formatting, vet, generated templ output, and every test against a real PostgreSQL and Chromium
test: fmt-check vet templ-check browser sshd
	@if [ -z "$$TEST_DATABASE_URL" ]; then $(MAKE) --no-print-directory postgres; fi
	$(GO) test -count=1 ./...

## bench: the load table against a durable private PostgreSQL (bench/results.json), then the Go benchmarks;
## with BASELINE=REV, creation and GET of this tree ÷ REV's, the two binaries alternating on one PostgreSQL
bench: build postgres
ifdef BASELINE
	./$(LAB) bench --baseline $(BASELINE)
else
	./$(LAB) bench
	$(GO) test -run='^$$' -bench=. -benchmem ./...
endif

## chaos: the commit before the newest migration on the newest schema (upgrade), then kill -9, PostgreSQL restart, webhook receiver down, three servers, failover and switchover on pg_auto_failover; fails on any loss
chaos: build postgres autofailover sshd
	./$(LAB) upgrade
	./$(LAB) chaos

## build: the product's binary and the lab's (bench and resilience suite), into bin/
build:
	$(GO) build -o $(BIN) ./cmd/fundsource
	$(GO) build -o $(LAB) ./cmd/fundsource-lab

fmt-check:
	@out=$$(gofmt -l $(SRC)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Regenerating templ output must change nothing (generated files are committed).
templ-check:
	$(GO) tool templ generate -path templates >/dev/null 2>&1
	@if [ -d .git ] && [ -n "$$(git status --porcelain -- templates)" ]; then \
		echo "templ output is stale: run 'go tool templ generate' and commit"; git status --short -- templates; exit 1; fi

## screenshots: the dashboard's pictures in the README and the hosted page's in docs/walkthrough.md (static/screenshots/)
screenshots: browser
	@if [ -z "$$TEST_DATABASE_URL" ]; then $(MAKE) --no-print-directory postgres; fi
	HOSTED_SCREENSHOTS=$(CURDIR)/static/screenshots DASHBOARD_SCREENSHOTS=$(CURDIR)/static/screenshots \
		$(GO) test -count=1 -run 'TestBrowserHostedStates|TestBrowserDashboardTour|TestBrowserDashboardActivityPages|TestBrowserDashboardPaymentActions|TestBrowserHeldPaymentsAndReturnRateBanner|TestBrowserDashboardShowsReturnRates' ./web/hosted ./web/dashboard

## fuzz: run each fuzz target briefly
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzDecode -fuzztime=30s ./web/surface
	$(GO) test -run='^$$' -fuzz=FuzzParseSecretKey -fuzztime=15s ./internal/merchant
	$(GO) test -run='^$$' -fuzz=FuzzParseCents -fuzztime=30s ./internal/core/money
	$(GO) test -run='^$$' -fuzz=FuzzValidChecksum -fuzztime=30s ./internal/adapter/routing
	$(GO) test -run='^$$' -fuzz=FuzzParseStatementAmount -fuzztime=30s ./internal/funding
	$(GO) test -run='^$$' -fuzz=FuzzTarget -fuzztime=30s ./internal/core/redirect
	$(GO) test -run='^$$' -fuzz=FuzzParseStatement -fuzztime=30s ./internal/ach
	$(GO) test -run='^$$' -fuzz=FuzzURLPolicy -fuzztime=30s ./internal/webhook
	$(GO) test -run='^$$' -fuzz=FuzzLoad -fuzztime=30s ./internal/sanctions
	$(GO) test -run='^$$' -fuzz=FuzzEndpoints -fuzztime=60s ./web
	$(GO) test -run='^$$' -fuzz=FuzzHostedForm -fuzztime=30s ./web
	$(GO) test -run='^$$' -fuzz=FuzzPathsAndQueries -fuzztime=30s ./web

# govulncheck, pinned, built into bin/ from the module proxy: a tool, not a
# dependency of the module.
GOVULNCHECK_VERSION := v1.9.0

## vuln: govulncheck over every package, against GOVULNDB (default https://vuln.go.dev; a local copy as file:///path); fails, saying why, when it cannot check
vuln:
	@GOBIN=$(CURDIR)/bin $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION) || { \
		echo "make vuln: could not build govulncheck $(GOVULNCHECK_VERSION) (is the module proxy reachable?); nothing was checked"; exit 1; }
	@db="$${GOVULNDB:-https://vuln.go.dev}"; \
	case "$$db" in /*) db="file://$$db";; esac; \
	case "$$db" in file://*) dir="$${db#file://}"; \
		if [ ! -f "$$dir/index/db.json" ] || [ ! -f "$$dir/index/modules.json" ]; then \
			echo "make vuln: no vulnerability database at $$db (index/db.json and index/modules.json are missing); nothing was checked"; exit 1; \
		fi;; \
	esac; \
	echo "govulncheck $(GOVULNCHECK_VERSION) over ./... against $$db"; \
	./bin/govulncheck -db "$$db" ./...; rc=$$?; \
	case $$rc in \
		0) echo "make vuln: no known vulnerability reaches this module";; \
		3) echo "make vuln: known vulnerabilities reach this module (listed above)";; \
		*) echo "make vuln: govulncheck could not finish (above), e.g. the database at $$db could not be read; nothing was checked";; \
	esac; exit $$rc

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

# OpenSSH's server: tests and make chaos start a throwaway sshd on loopback
# as the bank's SFTP server. Installed from Debian when missing and we are root.
sshd:
	@if [ -x /usr/sbin/sshd ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's openssh-server package"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null; \
	else \
		echo "OpenSSH's server is not installed. Install it with: sudo apt-get install -y openssh-server"; exit 1; \
	fi

# pg_auto_failover (pg_autoctl and the monitor's extension) for the
# failover scenarios of make chaos: Debian's package for the installed
# PostgreSQL, installed when missing and we are root.
autofailover: postgres
	@v=$$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sed 's|/usr/lib/postgresql/\([0-9]*\)/bin|\1|' | sort -n | tail -1); \
	if command -v pg_autoctl >/dev/null 2>&1 && [ -f /usr/share/postgresql/$$v/extension/pgautofailover.control ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's postgresql-$$v-auto-failover package"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-$$v-auto-failover >/dev/null; \
	else \
		echo "pg_auto_failover is not installed. Install it with: sudo apt-get install -y postgresql-$$v-auto-failover"; exit 1; \
	fi

# Browser tests need Debian's Chromium and the playwright driver (Node.js
# plus playwright-core, from npm; never playwright's own browser download).
# Installed when missing: Chromium only as root, otherwise say what to run.
browser:
	@if ! ls /usr/lib/chromium/chromium /usr/bin/chromium >/dev/null 2>&1 && [ -z "$$CHROMIUM_PATH" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing Debian's chromium package"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null; \
		else \
			echo "Chromium is not installed. Install it with: sudo apt-get install -y chromium (or set CHROMIUM_PATH)"; exit 1; \
		fi; \
	fi
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing Debian's nodejs and npm packages"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null; \
		else \
			echo "Node.js is not installed. Install it with: sudo apt-get install -y nodejs npm"; exit 1; \
		fi; \
	fi
	@if [ ! -f "$$PLAYWRIGHT_DRIVER_PATH/package/cli.js" ]; then \
		echo "installing playwright-core $(PLAYWRIGHT_VERSION) into $$PLAYWRIGHT_DRIVER_PATH"; \
		mkdir -p "$$PLAYWRIGHT_DRIVER_PATH" && cd "$$PLAYWRIGHT_DRIVER_PATH" && \
		npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error playwright-core@$(PLAYWRIGHT_VERSION) >/dev/null && \
		ln -sfn node_modules/playwright-core package && ln -sfn "$$(command -v node)" node; \
	fi
	@if [ "$$(cat "$$NODE_TOOLS_PATH/node_modules/.installed" 2>/dev/null)" != "$(NODE_TOOLS)" ]; then \
		echo "installing $(NODE_TOOLS) into $$NODE_TOOLS_PATH"; \
		mkdir -p "$$NODE_TOOLS_PATH" && cd "$$NODE_TOOLS_PATH" && \
		npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error $(NODE_TOOLS) >/dev/null && \
		echo "$(NODE_TOOLS)" > node_modules/.installed; \
	fi
