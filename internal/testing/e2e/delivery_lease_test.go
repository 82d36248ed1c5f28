package e2e_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/adapter/sftp"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/sftptest"
)

// silentServer accepts TCP connections and never answers, as a hung bank
// server does; it closes them when t ends. accepted is closed once it has
// taken a connection.
func silentServer(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done, first := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if conns = append(conns, c); len(conns) == 1 {
				close(first)
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), first
}

// TestAHungBankServerHoldsNoTransactionOrLock: while the bank's SFTP
// server accepts the connection and never answers, the upload holds no
// database transaction or lock: payments are created, read and refused
// cancellation at once, a second process passes the claimed file by
// instead of waiting on it, and no session sits idle in a transaction.
// When the upload times out the file is recorded failed, its lease given
// back, and the next run delivers it.
func TestAHungBankServerHoldsNoTransactionOrLock(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, key, _ := liveMerchant(t, h)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(h.Customer(key), "021000021", "000123456789")))["funding_source_id"].(string)
	inFile := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"5.00"`, "credit")))["payment_id"].(string)

	keys := sftptest.New(t) // for its client key and known hosts; the client dials the silent server
	const hang = 6 * time.Second
	addr, uploading := silentServer(t)
	client, err := sftp.New(sftp.Config{User: keys.User, Addr: addr, Path: keys.Root, KeyFile: keys.KeyFile,
		KnownHosts: keys.KnownHosts, Timeout: hang})
	if err != nil {
		t.Fatal(err)
	}
	o := h.originator(achConfig(t.TempDir())).WithTransport(sftp.Transport{Client: client})
	ran := make(chan error, 1)
	go func() {
		_, err := o.Run(context.Background())
		ran <- err
	}()
	select {
	case <-uploading: // claimed, built, and now talking to the bank
	case <-time.After(hang / 2):
		t.Fatal("the file's upload never started")
	}
	var leased int
	if err := h.SQL().Get(&leased, `SELECT count(*) FROM ach_files WHERE lease_owner IS NOT NULL`); err != nil || leased != 1 {
		t.Fatalf("files under a delivery lease during the upload = %d (%v), want 1", leased, err)
	}

	// While the upload hangs, everything else answers at once: well
	// within the hang, which a lock or a held connection would last.
	quick := func(what string, f func()) {
		t.Helper()
		start := time.Now()
		f()
		if d := time.Since(start); d > hang/3 {
			t.Errorf("%s took %s while the upload hung", what, d)
		}
	}
	quick("creating a payment", func() {
		th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"6.00"`, "credit")))
	})
	quick("reading the payment in the file", func() {
		if p := th.WantOK(t, h.Get("/v2/payments/"+inFile, key)); p["status"] != "pending" || p["sent_at"] != nil {
			t.Errorf("payment in the undelivered file = status %v, sent_at %v", p["status"], p["sent_at"])
		}
	})
	quick("canceling the payment in the file", func() {
		th.WantError(t, h.Post("/v2/payments/"+inFile+"/cancel", key, ""), http.StatusConflict, "conflict")
	})
	var idle int
	if err := h.SQL().Get(&idle, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND state LIKE 'idle in transaction%'`); err != nil || idle != 0 {
		t.Errorf("sessions idle in a transaction during the upload = %d (%v), want 0", idle, err)
	}
	other := &countingFolders{Folders: ach.Folders{Outbox: t.TempDir()}, count: map[string]int{}}
	second := secondProcess(t, h, other)
	quick("a second process's run", func() {
		if _, err := second.Run(context.Background()); err != nil {
			t.Errorf("second process's run = %v", err)
		}
	})
	var firstName string
	if err := h.SQL().Get(&firstName, `SELECT name FROM ach_files WHERE lease_owner IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if other.count[firstName] != 0 {
		t.Errorf("the second process delivered the claimed file %s", firstName)
	}

	select {
	case err := <-ran:
		if err == nil || !strings.Contains(err.Error(), firstName) {
			t.Errorf("the hung run = %v, want its delivery's failure", err)
		}
	case <-time.After(3 * hang):
		t.Fatal("the hung upload never gave up")
	}
	var f struct {
		Status   string  `db:"status"`
		Attempts int     `db:"attempts"`
		Lease    *string `db:"lease_owner"`
	}
	if err := h.SQL().Get(&f, `SELECT status, attempts, lease_owner FROM ach_files WHERE name = $1`, firstName); err != nil ||
		f.Status != ach.StatusFailed || f.Attempts != 1 || f.Lease != nil {
		t.Errorf("the file after the hung upload = %+v, %v", f, err)
	}
	if delivered, err := second.Run(context.Background()); err != nil || len(delivered) != 1 || delivered[0] != firstName {
		t.Errorf("the next run = %v, %v; want %s delivered", delivered, err, firstName)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+inFile, key)); p["sent_at"] == nil {
		t.Errorf("the payment after its file's delivery has no sent_at: %v", p)
	}
}
