package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/adapter/banksim"
	"github.com/fundsource/fundsource/internal/adapter/sftp"
	"github.com/fundsource/fundsource/internal/lab/achnet"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/sftptest"
)

// sftpClient is a client of srv as the service configures it.
func sftpClient(t *testing.T, srv *sftptest.Server) *sftp.Client {
	t.Helper()
	cfg, err := sftp.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.KeyFile, cfg.KnownHosts, cfg.Timeout = srv.KeyFile, srv.KnownHosts, 5*time.Second
	c, err := sftp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func fileStatus(t *testing.T, o *ach.Originator, name string) ach.FileSummary {
	t.Helper()
	files, _, err := o.Files(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("file %s is not listed in %+v", name, files)
	return ach.FileSummary{}
}

func step(t *testing.T, n *achnet.Network, date string) banksim.Summary {
	t.Helper()
	d, _ := time.Parse(time.DateOnly, date)
	sum, err := n.Step(d)
	if err != nil {
		t.Fatalf("achnet on %s: %v", date, err)
	}
	return sum
}

// TestBankConnectionOverSFTP: the service uploads its file to a real
// OpenSSH server's outbound/, achnet reads it there as the bank and
// answers into inbound/ with a return and camt.053 statements; the
// service polls inbound/, applies the return once though it is listed
// twice and copied under another name, and reconciles the statements:
// the file becomes settled and each day's lines match.
func TestBankConnectionOverSFTP(t *testing.T) {
	t.Parallel()
	srv := sftptest.New(t)
	h := newHarness(t) // Monday 2026-11-02
	_, key, _ := liveMerchant(t, h)
	o := h.originator(achConfig(t.TempDir())).WithTransport(sftp.Transport{Client: sftpClient(t, srv)})
	user := h.Customer(key)
	insufficient := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "021000021", "000123450001")))["funding_source_id"].(string)
	good := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "021000021", "000123458888")))["funding_source_id"].(string)
	returned := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(insufficient, `"25.00"`)))["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(good, `"40.00"`)))

	delivered, err := o.Run(context.Background())
	if err != nil || len(delivered) != 1 {
		t.Fatalf("run = %v, %v", delivered, err)
	}
	name := delivered[0]
	if _, err := os.Stat(filepath.Join(srv.Root, "outbound", name)); err != nil {
		t.Fatalf("the file is not in the server's outbound/: %v", err)
	}
	if parts, _ := filepath.Glob(filepath.Join(srv.Root, "outbound", "*.part")); len(parts) != 0 {
		t.Errorf("upload leftovers: %v", parts)
	}
	f := fileStatus(t, o, name)
	if f.Status != ach.StatusDelivered || f.Transport == nil || *f.Transport != "sftp" || f.Entries != 2 ||
		f.DebitCents == nil || *f.DebitCents != 6500 || *f.CreditCents != 0 {
		t.Fatalf("file after delivery = %+v", f)
	}

	bank := &achnet.Network{SFTP: sftpClient(t, srv), State: filepath.Join(t.TempDir(), "state.json"), Rules: banksim.Sandbox}
	// Effective Tuesday: the file settles, the bank books its debits.
	if sum := step(t, bank, "2026-11-03"); sum.Settled != 2 || len(sum.Statements) != 1 || len(sum.Written) != 0 {
		t.Fatalf("achnet on the effective date = %+v", sum)
	}
	if n, err := o.Poll(context.Background()); err != nil || n != 1 {
		t.Fatalf("poll of the statement = %d, %v", n, err)
	}
	if f := fileStatus(t, o, name); f.Status != ach.StatusSettled || f.SettledAt == nil {
		t.Fatalf("file after its statement = %+v", f)
	}
	r, err := o.Reconciliation(context.Background(), "2026-11-03")
	if err != nil || len(r.Matched) != 1 || r.Matched[0].Statement.Direction != ach.DirectionCredit ||
		r.Matched[0].Statement.Cents != 6500 || r.Matched[0].Service.Name != name ||
		len(r.Unmatched.Statement)+len(r.Unmatched.Service) != 0 {
		t.Fatalf("reconciliation of 2026-11-03 = %+v, %v", r, err)
	}

	// The R01 comes two banking days later, with the day's statement.
	if sum := step(t, bank, "2026-11-05"); sum.Returns != 1 || len(sum.Written) != 1 || len(sum.Statements) != 1 {
		t.Fatalf("achnet two banking days after = %+v", sum)
	}
	for i, want := range []int{2, 0} { // listed twice: applied once
		if n, err := o.Poll(context.Background()); err != nil || n != want {
			t.Fatalf("poll %d = %d, %v; want %d", i+1, n, err, want)
		}
	}
	// The same return under another name: remembered by its SHA-256.
	data, err := os.ReadFile(filepath.Join(srv.Root, "inbound", filepath.Base(bankWritten(t, srv)[0])))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.Root, "inbound", "copy-of-returns.ach"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := o.Poll(context.Background()); err != nil || n != 0 {
		t.Fatalf("poll of the copy = %d, %v", n, err)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+returned, key)); p["status"] != "failed" || p["failure_code"] != "R01" {
		t.Errorf("returned payment = %s", th.MustJSON(p))
	}
	if ev := h.Events("payment.failed"); len(ev) != 1 {
		t.Errorf("payment.failed events = %d, want 1", len(ev))
	}
	var inbound int
	if err := h.SQL().Get(&inbound, `SELECT count(*) FROM ach_inbound_files WHERE status = 'applied'`); err != nil || inbound != 3 {
		t.Errorf("inbound files recorded = %d, %v; want 3 (two statements, one return file)", inbound, err)
	}
	r, err = o.Reconciliation(context.Background(), "2026-11-05")
	if err != nil || len(r.Matched) != 1 || r.Matched[0].Statement.Direction != ach.DirectionDebit ||
		r.Matched[0].Statement.Cents != 2500 || r.Matched[0].Service.InboundSHA256 == "" ||
		len(r.Unmatched.Statement)+len(r.Unmatched.Service) != 0 {
		t.Fatalf("reconciliation of 2026-11-05 = %+v, %v", r, err)
	}
	if st, svc := o.Unmatched(); st != 0 || svc != 0 {
		t.Errorf("unmatched = %d statement, %d service lines; want none", st, svc)
	}
}

// bankWritten lists the return files in the server's inbound/.
func bankWritten(t *testing.T, srv *sftptest.Server) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(srv.Root, "inbound", "achnet-2*.ach"))
	if len(names) == 0 {
		t.Fatal("no return file in inbound/")
	}
	return names
}

// TestDeliveryWaitsForTheSFTPServer: with the bank's server down, the run
// builds the file, fails to deliver it (failed, counted, an error) and
// loses nothing; once the server is back the next run delivers it, once.
func TestDeliveryWaitsForTheSFTPServer(t *testing.T) {
	t.Parallel()
	srv := sftptest.New(t)
	h := newHarness(t)
	_, key, _ := liveMerchant(t, h)
	o := h.originator(achConfig(t.TempDir())).WithTransport(sftp.Transport{Client: sftpClient(t, srv)})
	user := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "021000021", "000123458888")))["funding_source_id"].(string)
	th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"12.34"`)))

	srv.Stop()
	delivered, err := o.Run(context.Background())
	if err == nil || len(delivered) != 0 || o.DeliveryFailures() != 1 {
		t.Fatalf("run with the server down = %v, %v (failures %d)", delivered, err, o.DeliveryFailures())
	}
	files, _, _ := o.Files(context.Background(), 10)
	if len(files) != 1 || files[0].Status != ach.StatusFailed || files[0].Attempts != 1 || files[0].LastError == nil ||
		files[0].DebitCents == nil || *files[0].DebitCents != 1234 {
		t.Fatalf("files with the server down = %+v", files)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	delivered, err = o.Run(context.Background())
	if err != nil || len(delivered) != 1 || delivered[0] != files[0].Name {
		t.Fatalf("run with the server back = %v, %v", delivered, err)
	}
	if again, err := o.Run(context.Background()); err != nil || len(again) != 0 {
		t.Errorf("a third run = %v, %v; want nothing", again, err)
	}
	out, _ := filepath.Glob(filepath.Join(srv.Root, "outbound", "*"))
	if len(out) != 1 || !strings.HasSuffix(out[0], files[0].Name) {
		t.Errorf("outbound/ = %v; want the one file", out)
	}
	if f := fileStatus(t, o, files[0].Name); f.Status != ach.StatusDelivered || f.Attempts != 1 {
		t.Errorf("file after the server came back = %+v", f)
	}
}
