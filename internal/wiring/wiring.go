// Package wiring builds the service from a configuration and a database:
// the vault, the routing directory, every domain service, the HTTP handler
// and the webhook dispatcher. It is the one place that does so: 'serve',
// 'dev', the operator commands, the lab and every test harness call Build.
//
// Domain packages declare the small interfaces they need (Store, and for
// funding also Banks, Vault and Provider) and share only the kernel
// packages of internal/core; this package is where the adapters meet them.
// It holds no rule and never reaches a store through the adapter's types:
// what crosses domains is the domains' own (package consequence, the
// stores' explicit Funding/Payments). No domain package imports web or app. The service clock truncates
// to microseconds, so a timestamp returned on creation equals the one read
// back.
package wiring

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/adapter/banksim"
	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/adapter/provider"
	"github.com/fundsource/fundsource/internal/adapter/rail"
	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/adapter/routing"
	"github.com/fundsource/fundsource/internal/adapter/sftp"
	"github.com/fundsource/fundsource/internal/adapter/vault"
	"github.com/fundsource/fundsource/internal/advance"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/overview"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/requestlog"
	"github.com/fundsource/fundsource/internal/sanctions"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/web"
	"github.com/fundsource/fundsource/web/api"
	"github.com/fundsource/fundsource/web/surface"
)

// Deps are what Build needs besides the configuration.
type Deps struct {
	DB  *postgres.DB
	Log *slog.Logger
	Now func() time.Time // the service's clock; Clock in production
	// PasswordCost is bcrypt's cost for dashboard passwords; 0 is
	// bcrypt.DefaultCost (tests use bcrypt.MinCost).
	PasswordCost int
}

// Services is the built service.
type Services struct {
	Config    *config.Config
	Log       *slog.Logger
	Now       func() time.Time
	DB        *postgres.DB
	Vault     *vault.Vault
	Merchants *merchant.Service
	Customers *customer.Service
	Funding   *funding.Service
	Webhooks  *webhook.Service
	Payments  *payment.Service
	// Consequences are what returns, settlements, blocks and removals set
	// off across funding and payments.
	Consequences *consequence.Service
	// Originator writes NACHA files; nil unless ACH_ODFI_ROUTING is set.
	Originator *ach.Originator
	// Advances run the sandbox test clocks' advances.
	Advances *advance.Runner
	// Metrics are the HTTP series of Handler, for METRICS_ADDR.
	Metrics *surface.Metrics
	// Requests is the API request log; the process runs its writer
	// (Requests.Run) and its retention sweep (Requests.Purge).
	Requests *requestlog.Log
	// Overview is the dashboard Home's charts.
	Overview *overview.Service
	// Audit is the security log.
	Audit *audit.Service
	// Originators are the merchant environments as ACH originators.
	Originators *originator.Service
	// TestClocks are the sandbox's test clocks.
	TestClocks *testclock.Service
	// Sanctions is the SDN list names are screened against; the process
	// reloads it when its files change (Sanctions.Watch).
	Sanctions *sanctions.List
}

// Build makes the services of cfg on d.DB.
func Build(cfg *config.Config, d Deps) (*Services, error) {
	keys := make([]vault.Key, len(cfg.AccountEncryptionKeys))
	for i, k := range cfg.AccountEncryptionKeys {
		keys[i] = vault.Key{ID: k.ID, Bytes: k.Bytes}
	}
	v, err := vault.New(keys, cfg.FingerprintKey)
	if err != nil {
		return nil, err
	}
	banks, err := LoadDirectory(cfg.RoutingDirectoryFile)
	if err != nil {
		return nil, err
	}
	cost := d.PasswordCost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	db, now := d.DB, d.Now
	db.SetAuditKey(cfg.AuditKey)
	db.SetClock(now)
	fund := funding.NewService(db.Funding(), banks, v, now)
	if cfg.PlaidBaseURL != "" {
		fund.WithProvider(provider.New(cfg.PlaidBaseURL, cfg.PlaidClientID, cfg.PlaidSecret, d.Log))
	}
	reach, err := LoadRails(cfg.InstantDirectoryFile)
	if err != nil {
		return nil, err
	}
	fund.WithRails(reach, instantRails(cfg, d.Log))
	fund.WithSchedule(cfg.ACHWindows.Schedule, cfg.ACHWindows.SameDayMicro)
	sdn, err := OpenSanctions(cfg, now)
	if err != nil {
		return nil, err
	}
	s := &Services{
		Config: cfg, Log: d.Log, Now: now, DB: db, Vault: v, Metrics: surface.NewMetrics(),
		Merchants: merchant.NewService(db.Merchants(), bcryptHasher{cost: cost}, now),
		Customers: customer.NewService(db.Customers(), now).WithSanctions(sdn),
		Funding:   fund,
		Webhooks:  webhook.NewService(db.Webhooks(), v, now, webhook.URLPolicy{AllowPrivate: cfg.WebhookAllowPrivateTargets}),
		Payments: payment.NewService(db.Payments(), payment.Config{MaxAmount: cfg.PaymentMaxCents, SettleDelay: cfg.PaymentSettleDelay,
			Schedule: cfg.ACHWindows.Schedule}, now).
			WithSanctions(sdn).
			WithInstant(rail.Payouts{Funding: fund}, payment.InstantConfig{RailLimits: cfg.InstantRailLimits}),
		Requests: requestlog.New(db.Requests(), now, d.Log),
		Overview: overview.NewService(db.Overview(), now),
		Audit:    audit.NewService(db.Audit(), cfg.AuditKey),
	}
	s.Sanctions = sdn
	s.Metrics.GaugeFunc("fundsource_sanctions_entries", "Entries of the SDN list in use.", func() int64 { return int64(sdn.Len()) })
	s.Metrics.GaugeFunc("fundsource_sanctions_aliases", "Aliases (alt.csv) of the SDN list in use.", func() int64 { return int64(sdn.Aliases()) })
	s.Metrics.CounterFunc("fundsource_sanctions_reload_failures_total",
		"Changed SDN list files refused (the list in use stays).", sdn.ReloadFailures)
	s.Originators = originator.NewService(db.Originators(), s.Payments, now).WithSanctions(sdn)
	s.Payments.WithOriginators(s.Originators).WithThresholds(s.Originators).WithAccountChecks(s.Funding)
	s.Merchants.WithOriginatorNames(originator.NameAfter)
	s.Consequences = consequence.NewService(db.Consequences(), s.Funding, s.Payments)
	s.TestClocks = testclock.NewService(db.TestClocks(), now).OnCreated(s.Merchants.KeysChanged)
	s.Advances = advance.NewRunner(db, s.markReady, s.ClockWorld, cfg.ACHWindows.Schedule, ids.New(ids.AdvanceOwner), now)
	s.Metrics.GaugeFunc("fundsource_payment_reversal_then_return_alerts",
		"Payments that came back after their reversal had left, over 30 days (-1 when the count failed): the customer may have been paid back twice.",
		func() int64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := s.Payments.AllReversedThenReturned(ctx)
			if err != nil {
				d.Log.Warn("metrics: count reversal_then_return alerts", "error", err)
				return -1
			}
			return n
		})
	s.Metrics.GaugeFunc("fundsource_payment_refund_then_return_alerts",
		"Debits returned as unauthorized after a refund of them had left, over 30 days (-1 when the count failed): the customer may have been paid back twice.",
		func() int64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := s.Payments.AllRefundedThenReturned(ctx)
			if err != nil {
				d.Log.Warn("metrics: count refund_then_return alerts", "error", err)
				return -1
			}
			return n
		})
	if cfg.ACHODFIRouting != "" {
		ac := ach.Config{Dir: cfg.ACHOutboxDir, ODFIRouting: cfg.ACHODFIRouting, DestinationRouting: cfg.ACHDestinationRouting,
			DestinationName: cfg.ACHDestinationName, OriginName: cfg.ACHOriginName, CompanyName: cfg.ACHCompanyName,
			CompanyID: cfg.ACHCompanyID, MicroOffset: cfg.ACHMicroOffset, OffsetAccount: cfg.ACHOffsetAccount,
			Schedule: cfg.ACHWindows.Schedule, SameDayMicro: cfg.ACHWindows.SameDayMicro, SettlementAccount: cfg.ACHSettlementAccount}
		if err := ac.Validate(); err != nil {
			return nil, err
		}
		s.Originator = ach.NewOriginator(ac, db.ACH(), s.Funding, s.Payments, s.Consequences, now).WithLog(d.Log)
		t, err := ACHTransport(cfg)
		if err != nil {
			return nil, err
		}
		s.Originator.WithTransport(t)
		s.Metrics.CounterFunc("fundsource_ach_delivery_failures_total",
			"ACH file deliveries that failed (the file is delivered again at the next run).", s.Originator.DeliveryFailures)
		s.Metrics.CounterFunc("fundsource_ach_inbound_rejected_total",
			"Inbound ACH files set aside unread (malformed): nothing of them was applied.", s.Originator.RejectedFiles)
		s.Metrics.GaugeFunc("fundsource_ach_unmatched_answers",
			"Returns and notifications of change that matched no single entry, kept for an operator (fundsource ach unmatched).", s.Originator.OpenAnswers)
		s.Metrics.GaugeFunc("fundsource_ach_reconciliation_unmatched_statement_lines",
			"Bank statement lines no delivered file or return matched.", func() int64 { st, _ := s.Originator.Unmatched(); return st })
		s.Metrics.GaugeFunc("fundsource_ach_reconciliation_unmatched_settlements",
			"Expected settlements (files, returns) the bank's statements have not shown.", func() int64 { _, svc := s.Originator.Unmatched(); return svc })
	}
	return s, nil
}

// markReady ends a clock's advance (advance.Ready).
func (s *Services) markReady(ctx context.Context, scope tenant.Scope, id string) error {
	_, err := s.TestClocks.MarkReady(ctx, scope, id)
	return err
}

// ClockWorld is production's jobs on test clock id: an ACH originator of
// its own, whose transport is the clock's exchange with its simulated
// bank (banksim's sandbox rules), beside the shared services.
func (s *Services) ClockWorld(id string) advance.World {
	files := s.DB.ClockFiles(id)
	cfg := advance.ACHConfig(s.Config.ACHWindows.Schedule, s.Config.ACHWindows.SameDayMicro)
	o := ach.NewOriginator(cfg, s.DB.ACH(), s.Funding, s.Payments, s.Consequences, s.Now).WithLog(s.Log)
	o.WithTransport(files)
	bank := &banksim.Network{Exchange: files.Bank(), Rules: banksim.Sandbox, NoStatements: true, Amounts: payment.SandboxReturnCode}
	return advance.Production{Originator: o, Bank: clockBank{bank}, Funding: s.Funding, Payments: s.Payments, Consequences: s.Consequences}
}

// clockBank is banksim's network as advance.Bank.
type clockBank struct{ n *banksim.Network }

func (b clockBank) Step(ctx context.Context, date calendar.Date) error {
	_, err := b.n.Step(ctx, date)
	return err
}

// BackgroundConns are the connections a process keeps for its background
// work beside the API's: webhook claims and records are short statements
// (no delivery holds a connection while it waits on a receiver), and the
// sweeps run one at a time.
const BackgroundConns = 8

// Open opens the database at dbURL, sized for cfg's webhook workers,
// migrates it and builds the services on it with the service's clock. The
// returned function closes the database.
func Open(ctx context.Context, cfg *config.Config, dbURL string, log *slog.Logger) (*Services, func(), error) {
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return nil, nil, err
	}
	db.Reserve(BackgroundConns)
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	s, err := Build(cfg, Deps{DB: db, Log: log, Now: Clock})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return s, func() { db.Close() }, nil
}

// Handler is the HTTP handler of the service: the API, the dashboard and
// the hosted page on one Gin engine.
func (s *Services) Handler() *gin.Engine {
	return web.New(web.Deps{
		Answers:      s.DB.ACH(),
		Config:       s.Config,
		Logger:       s.Log,
		Now:          s.Now,
		DB:           s.DB,
		Idempotency:  idempotent{s},
		Merchants:    s.Merchants,
		Customers:    s.Customers,
		Funding:      s.Funding,
		Webhooks:     s.Webhooks,
		Payments:     s.Payments,
		Consequences: s.Consequences,
		Metrics:      s.Metrics,
		Requests:     s.Requests,
		Overview:     s.Overview,
		Audit:        s.Audit,
		Originators:  s.Originators,
		TestClocks:   s.TestClocks,
	})
}

// On returns the API's services bound to tx: an idempotent request's use
// cases write in the transaction that holds the claim on its key.
func (s *Services) On(tx postgres.Tx) api.Services {
	f, p := s.Funding.On(tx.Funding()), s.Payments.On(tx.Payments())
	return api.Services{
		Merchants:    s.Merchants.On(tx.Merchants()),
		Customers:    s.Customers.On(tx.Customers()),
		Funding:      f,
		Webhooks:     s.Webhooks.On(tx.Webhooks()),
		Payments:     p,
		Consequences: s.Consequences.On(tx.Consequences(), f, p),
		TestClocks:   s.TestClocks.On(tx.TestClocks()),
	}
}

// idempotent is the API's IdempotencyStore: postgres.DB.Idempotent, whose
// function gets the services bound to the request's transaction.
type idempotent struct{ s *Services }

func (i idempotent) Idempotent(ctx context.Context, req idempotency.Request, fn func(tx api.Services) (idempotency.Response, bool)) (*idempotency.Response, error) {
	return i.s.DB.Idempotent(ctx, req, func(tx postgres.Tx) (idempotency.Response, bool) { return fn(i.s.On(tx)) })
}

func (i idempotent) Replace(ctx context.Context, req idempotency.Request, resp idempotency.Response) error {
	return i.s.DB.ReplaceIdempotent(ctx, req, resp)
}

// Dispatcher is a webhook dispatcher with the configured client and
// limits; what opts sets (tests set numbers) takes precedence.
func (s *Services) Dispatcher(opts webhook.DispatcherOptions) *webhook.Dispatcher {
	cfg := s.Config
	opts.Logger = cmp.Or(opts.Logger, s.Log)
	opts.InFlight = cmp.Or(opts.InFlight, cfg.WebhookInFlight)
	opts.PerEndpoint = cmp.Or(opts.PerEndpoint, cfg.WebhookPerEndpoint)
	opts.Poll = cmp.Or(opts.Poll, cfg.WebhookPollInterval)
	opts.Timeout = cmp.Or(opts.Timeout, cfg.WebhookTimeout)
	opts.DisableAfter = cmp.Or(opts.DisableAfter, cfg.WebhookDisableAfter)
	return webhook.NewDispatcher(s.DB.Webhooks(), s.Vault, webhook.NewClient(s.Config.WebhookAllowPrivateTargets), s.Now, opts)
}

// LoadDirectory reads the FedACH directory file when configured, else the
// embedded sample.
func LoadDirectory(path string) (*routing.Directory, error) {
	if path == "" {
		return routing.Embedded(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ROUTING_DIRECTORY_FILE: %w", err)
	}
	defer f.Close()
	d, err := routing.LoadFedACH(f)
	if err != nil {
		return nil, fmt.Errorf("ROUTING_DIRECTORY_FILE %s: %w", path, err)
	}
	return d, nil
}

// OpenSanctions loads the SDN list cfg names (OFAC_SDN_FILE and
// OFAC_ALT_FILE), or the embedded sample when it names none.
func OpenSanctions(cfg *config.Config, now func() time.Time) (*sanctions.List, error) {
	return sanctions.Open(sanctions.Files{SDN: cfg.SanctionsFile, Alt: cfg.SanctionsAltFile}, now)
}

// Clock is the service's time: UTC, truncated to PostgreSQL's microsecond
// precision so that a value returned on creation equals the one read back.
func Clock() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// bcryptHasher hashes dashboard passwords with bcrypt.
type bcryptHasher struct{ cost int }

func (h bcryptHasher) Hash(password string) (string, error) {
	b, err := bcrypt.GenerateFromPassword([]byte(password), h.cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(b), nil
}

func (bcryptHasher) Compare(hash, password string) error {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password))
}

// instantRails are the rail clients per environment. INSTANT_RAIL_URL
// serves production, and sandbox too in development ('make run' points it
// at its simulator); otherwise sandbox keys reach the rail simulator in
// process, so a production process never sends a sandbox credit to a
// real rail. Production without INSTANT_RAIL_URL has no rail.
func instantRails(cfg *config.Config, log *slog.Logger) map[tenant.Environment]funding.Rail {
	debtor := rail.Party{Name: cmp.Or(cfg.ACHCompanyName, "fundsource"), RoutingNumber: cfg.ACHODFIRouting}
	rails := map[tenant.Environment]funding.Rail{
		tenant.Sandbox: rail.New("http://rail-simulator.invalid/", rail.Options{
			HTTP: &http.Client{Transport: railsim.New().Transport()}, Debtor: debtor, Log: log}),
	}
	if cfg.InstantRailURL != "" {
		live := rail.New(cfg.InstantRailURL, rail.Options{Debtor: debtor, Log: log})
		rails[tenant.Production] = live
		if cfg.Mode != config.Production {
			rails[tenant.Sandbox] = live
		}
	}
	return rails
}

// LoadRails reads the instant directory: the embedded sample, with the
// rows of INSTANT_DIRECTORY_FILE when configured.
func LoadRails(path string) (*routing.Rails, error) {
	if path == "" {
		return routing.EmbeddedRails(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("INSTANT_DIRECTORY_FILE: %w", err)
	}
	defer f.Close()
	r, err := routing.LoadRails(f)
	if err != nil {
		return nil, fmt.Errorf("INSTANT_DIRECTORY_FILE %s: %w", path, err)
	}
	return r, nil
}

// ACHTransport is where cfg delivers files and finds the bank's answers:
// the bank's SFTP server when ACH_SFTP_URL is set, else the outbox and
// inbox folders.
func ACHTransport(cfg *config.Config) (ach.Transport, error) {
	if cfg.ACHSFTPURL == "" {
		return ach.Folders{Outbox: cfg.ACHOutboxDir, Inbox: cfg.ACHInboxDir}, nil
	}
	sc, err := sftp.ParseURL(cfg.ACHSFTPURL)
	if err != nil {
		return nil, err
	}
	sc.KeyFile, sc.KnownHosts = cfg.ACHSFTPKeyFile, cfg.ACHSFTPKnownHosts
	c, err := sftp.New(sc)
	if err != nil {
		return nil, err
	}
	return sftp.Transport{Client: c}, nil
}
