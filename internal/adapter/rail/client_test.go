package rail_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/rail"
	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/funding"
)

func credit(account string) funding.InstantCredit {
	return funding.InstantCredit{MessageID: ids.New("msg_"), Rail: funding.RailRTP, RoutingNumber: "110000000",
		AccountNumber: account, AccountType: funding.Savings, AmountCents: 1, Remittance: "FSAB2C"}
}

func simServer(t *testing.T) (*railsim.Sim, *httptest.Server) {
	t.Helper()
	sim := railsim.New()
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return sim, srv
}

func TestCreditOutcomes(t *testing.T) {
	sim, srv := simServer(t)
	c := rail.New(srv.URL, rail.Options{})
	for _, tc := range []struct {
		account  string
		accepted bool
		reason   string
	}{
		{"123456789", true, ""},
		{railsim.AccountNoSuchAccount, false, "AC03"},
		{railsim.AccountClosed, false, "AC04"},
		{railsim.AccountBlocked, false, "AC06"},
	} {
		start := time.Now()
		got, err := c.Credit(context.Background(), credit(tc.account))
		if err != nil {
			t.Fatalf("%s: %v", tc.account, err)
		}
		if got.Accepted != tc.accepted || got.Reason != tc.reason {
			t.Errorf("%s: got accepted %v reason %q, want %v %q", tc.account, got.Accepted, got.Reason, tc.accepted, tc.reason)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: answered in %s, want within a second", tc.account, d)
		}
	}
	credits := sim.Credits()
	if len(credits) != 4 {
		t.Fatalf("got %d credits at the rail, want 4", len(credits))
	}
	if cr := credits[0]; cr.AmountCents != 1 || cr.Remittance != "FSAB2C" || cr.RoutingNumber != "110000000" || cr.LastFour != "6789" {
		t.Errorf("got credit %+v, want 1 cent to 110000000 ••••6789 with remittance FSAB2C", cr)
	}
}

func TestCreditTimeoutAndDown(t *testing.T) {
	sim, srv := simServer(t)
	c := rail.New(srv.URL, rail.Options{AttemptTimeout: 200 * time.Millisecond, Attempts: 2})
	start := time.Now()
	_, err := c.Credit(context.Background(), credit(railsim.AccountTimeout))
	if !errors.Is(err, rail.ErrTimeout) || !errors.Is(err, funding.ErrRailUnavailable) || errors.Is(err, rail.ErrDown) {
		t.Errorf("timeout account: got %v, want ErrTimeout wrapping funding.ErrRailUnavailable", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timeout took %s, want about two attempts of 200ms", d)
	}

	sim.SetDown(true)
	var logs bytes.Buffer
	c = rail.New(srv.URL, rail.Options{AttemptTimeout: 200 * time.Millisecond, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	down := credit("123456789")
	_, err = c.Credit(context.Background(), down)
	if !strings.Contains(logs.String(), down.MessageID) || strings.Contains(logs.String(), "123456789") || strings.Contains(logs.String(), "FSAB2C") {
		t.Errorf("log = %q, want the message id and neither the account number nor the code", logs.String())
	}
	if !errors.Is(err, rail.ErrDown) || !errors.Is(err, funding.ErrRailUnavailable) || errors.Is(err, rail.ErrTimeout) {
		t.Errorf("rail down: got %v, want ErrDown wrapping funding.ErrRailUnavailable", err)
	}
	sim.SetDown(false)
	if _, err := c.Credit(context.Background(), credit("123456789")); err != nil {
		t.Errorf("rail back up: %v", err)
	}

	srv.Close()
	_, err = c.Credit(context.Background(), credit("123456789"))
	if !errors.Is(err, rail.ErrDown) {
		t.Errorf("nothing listening: got %v, want ErrDown", err)
	}
}

// A lost answer is resent with the same message id, and the rail credits
// once.
func TestCreditResendKeepsMessageID(t *testing.T) {
	sim := railsim.New()
	h := sim.Handler()
	var calls atomic.Int32
	var bodies [2][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		if n <= 2 {
			bodies[n-1] = body
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if n == 1 {
			// The rail gets the credit but the answer is lost.
			h.ServeHTTP(httptest.NewRecorder(), r)
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cr := credit("123456789")
	got, err := rail.New(srv.URL, rail.Options{}).Credit(context.Background(), cr)
	if err != nil || !got.Accepted {
		t.Fatalf("got %+v, %v; want accepted after a resend", got, err)
	}
	if calls.Load() != 2 || !bytes.Equal(bodies[0], bodies[1]) {
		t.Errorf("got %d sends (same bytes: %v), want 2 identical", calls.Load(), bytes.Equal(bodies[0], bodies[1]))
	}
	if n := len(sim.Credits()); n != 1 {
		t.Errorf("the rail recorded %d credits, want 1", n)
	}
	// A later call with the same message id is answered from the record.
	if _, err := rail.New(srv.URL, rail.Options{}).Credit(context.Background(), cr); err != nil || len(sim.Credits()) != 1 {
		t.Errorf("resend: %v, %d credits; want one credit", err, len(sim.Credits()))
	}
}

func TestCreditRefusesAReportOnAnotherMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := rail.EncodeReport(rail.Report{MessageID: "r", OriginalMessageID: "someone-else", Status: rail.StatusSettled, At: time.Now()})
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	_, err := rail.New(srv.URL, rail.Options{}).Credit(context.Background(), credit("123456789"))
	if !errors.Is(err, funding.ErrRailAnswerUnknown) {
		t.Errorf("got %v, want an answer-unknown error: the rail took the credit", err)
	}
}

func TestMessagesRoundTrip(t *testing.T) {
	in := credit("000123456789")
	b, err := rail.EncodeCredit(in, rail.Party{Name: "fundsource", RoutingNumber: "222222226"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"`, "<Ustrd>FSAB2C</Ustrd>",
		`<IntrBkSttlmAmt Ccy="USD">0.01</IntrBkSttlmAmt>`, "<Cd>USABA</Cd>", "<Cd>SVGS</Cd>"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("pacs.008 lacks %s:\n%s", want, b)
		}
	}
	got, err := rail.DecodeCredit(b)
	if err != nil {
		t.Fatal(err)
	}
	in.Rail = "" // not carried by the message
	if got != in {
		t.Errorf("got %+v, want %+v", got, in)
	}
	if _, err := rail.DecodeCredit([]byte("<Document/>")); err == nil {
		t.Error("an empty document decoded")
	}
	rep, err := rail.EncodeReport(rail.Report{MessageID: "r1", OriginalMessageID: in.MessageID, Status: rail.StatusRejected, Reason: "AC04", At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rail.DecodeReport(rep)
	if err != nil || r.Status != "RJCT" || r.Reason != "AC04" || r.OriginalMessageID != in.MessageID {
		t.Errorf("got %+v, %v; want RJCT AC04 on %s", r, err, in.MessageID)
	}
	if !strings.Contains(string(rep), `xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10"`) {
		t.Errorf("pacs.002 lacks its namespace:\n%s", rep)
	}
}

func TestInProcessTransport(t *testing.T) {
	sim := railsim.New()
	c := rail.New("http://rail.invalid/", rail.Options{HTTP: &http.Client{Transport: sim.Transport()}, AttemptTimeout: 100 * time.Millisecond})
	if got, err := c.Credit(context.Background(), credit(railsim.AccountClosed)); err != nil || got.Reason != "AC04" {
		t.Errorf("got %+v, %v; want AC04", got, err)
	}
	if _, err := c.Credit(context.Background(), credit(railsim.AccountTimeout)); !errors.Is(err, rail.ErrTimeout) {
		t.Errorf("got %v, want ErrTimeout", err)
	}
}

// pacs002 is a pacs.002 answering message id orig, as the published
// layout of version (08 to 12) puts it: the group header, the original
// group, and the transaction's status with its reason (versions from .09
// on carry the original UETR too).
func pacs002(version, orig, status, reason string) string {
	uetr := ""
	if version >= "09" {
		uetr = "<OrgnlUETR>8a562c67-ca16-48ba-b074-65581be6f011</OrgnlUETR>"
	}
	rsn := ""
	if reason != "" {
		rsn = "<StsRsnInf><Rsn><Cd>" + reason + "</Cd></Rsn><AddtlInf>Creditor account number invalid or missing</AddtlInf></StsRsnInf>"
	}
	return `<?xml version="1.0" encoding="UTF-8"?>` +
		`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.002.001.` + version + `">` +
		`<FIToFIPmtStsRpt><GrpHdr><MsgId>RPT-` + version + `</MsgId><CreDtTm>2026-11-02T15:04:05.123-05:00</CreDtTm>` +
		`<InstgAgt><FinInstnId><ClrSysMmbId><ClrSysId><Cd>USABA</Cd></ClrSysId><MmbId>021000021</MmbId></ClrSysMmbId></FinInstnId></InstgAgt></GrpHdr>` +
		`<OrgnlGrpInfAndSts><OrgnlMsgId>` + orig + `</OrgnlMsgId><OrgnlMsgNmId>pacs.008.001.08</OrgnlMsgNmId></OrgnlGrpInfAndSts>` +
		`<TxInfAndSts><StsId>STS1</StsId><OrgnlGrpInf><OrgnlMsgId>` + orig + `</OrgnlMsgId><OrgnlMsgNmId>pacs.008.001.08</OrgnlMsgNmId></OrgnlGrpInf>` +
		`<OrgnlEndToEndId>` + orig + `</OrgnlEndToEndId><OrgnlTxId>` + orig + `</OrgnlTxId>` + uetr +
		`<TxSts>` + status + `</TxSts>` + rsn + `<AccptncDtTm>2026-11-02T15:04:05-05:00</AccptncDtTm></TxInfAndSts>` +
		`</FIToFIPmtStsRpt></Document>`
}

// answering is a rail over HTTP that reads each pacs.008 and answers with
// answer(message id); it counts the messages it got.
func answering(t *testing.T, answer func(msgID string) string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		c, err := rail.DecodeCredit(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", rail.ContentType)
		_, _ = io.WriteString(w, answer(c.MessageID))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestStatusReportVersions: a pacs.002 of each version from .001.08 to
// .001.12 is read, accepted (ACSC, ACCP) or rejected with its reason.
func TestStatusReportVersions(t *testing.T) {
	for _, version := range []string{"08", "09", "10", "11", "12"} {
		for _, c := range []struct {
			status, reason string
			accepted       bool
		}{{"ACSC", "", true}, {"ACCP", "", true}, {"RJCT", "AC03", false}} {
			srv, calls := answering(t, func(id string) string { return pacs002(version, id, c.status, c.reason) })
			got, err := rail.New(srv.URL, rail.Options{}).Credit(context.Background(), credit("123456789"))
			if err != nil || got.Accepted != c.accepted || got.Reason != c.reason || calls.Load() != 1 {
				t.Errorf("pacs.002.001.%s %s: %+v, %v after %d calls; want accepted %v reason %q", version, c.status, got, err, calls.Load(), c.accepted, c.reason)
			}
			if want := time.Date(2026, 11, 2, 20, 4, 5, 123e6, time.UTC); err == nil && !got.At.Equal(want) {
				t.Errorf("pacs.002.001.%s: at %s, want %s", version, got.At, want)
			}
		}
	}
	// A group status alone (no transaction status) answers too.
	srv, _ := answering(t, func(id string) string {
		return `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.002.001.12"><FIToFIPmtStsRpt><GrpHdr><MsgId>G</MsgId>` +
			`<CreDtTm>2026-11-02T15:04:05Z</CreDtTm></GrpHdr><OrgnlGrpInfAndSts><OrgnlMsgId>` + id + `</OrgnlMsgId>` +
			`<OrgnlMsgNmId>pacs.008.001.08</OrgnlMsgNmId><GrpSts>RJCT</GrpSts><StsRsnInf><Rsn><Cd>AC03</Cd></Rsn></StsRsnInf>` +
			`</OrgnlGrpInfAndSts></FIToFIPmtStsRpt></Document>`
	})
	if got, err := rail.New(srv.URL, rail.Options{}).Credit(context.Background(), credit("123456789")); err != nil || got.Accepted || got.Reason != "AC03" {
		t.Errorf("group status RJCT AC03: %+v, %v", got, err)
	}
}

// TestUnreadableReportIsAnswerUnknown: an answer the client cannot read
// (a version outside .08–.12, no status, a status that settles nothing,
// ids of another message or that disagree, not XML) is
// funding.ErrRailAnswerUnknown, not ErrRailUnavailable: the rail took the
// credit. It is not resent.
func TestUnreadableReportIsAnswerUnknown(t *testing.T) {
	for name, answer := range map[string]func(string) string{
		"pacs.002.001.07": func(id string) string { return strings.Replace(pacs002("10", id, "ACSC", ""), "001.10", "001.07", 1) },
		"pacs.002.001.13": func(id string) string { return strings.Replace(pacs002("12", id, "ACSC", ""), "001.12", "001.13", 1) },
		"no status": func(id string) string {
			return strings.Replace(pacs002("11", id, "ACSC", ""), "<TxSts>ACSC</TxSts>", "", 1)
		},
		"pending":         func(id string) string { return pacs002("11", id, "PDNG", "") },
		"another message": func(string) string { return pacs002("11", "msg_someone_else", "ACSC", "") },
		"ids disagree": func(id string) string {
			return strings.Replace(pacs002("11", id, "ACSC", ""), "<OrgnlTxId>"+id, "<OrgnlTxId>other", 1)
		},
		"not XML": func(string) string { return "<html><body>Service Temporarily Unavailable</body></html>" },
	} {
		srv, calls := answering(t, answer)
		var logs bytes.Buffer
		cr := credit("123456789")
		_, err := rail.New(srv.URL, rail.Options{Log: slog.New(slog.NewTextHandler(&logs, nil))}).Credit(context.Background(), cr)
		if !errors.Is(err, funding.ErrRailAnswerUnknown) || !errors.Is(err, rail.ErrUnreadable) || errors.Is(err, funding.ErrRailUnavailable) {
			t.Errorf("%s: %v, want ErrUnreadable wrapping funding.ErrRailAnswerUnknown", name, err)
		}
		if calls.Load() != 1 {
			t.Errorf("%s: sent %d times, want once", name, calls.Load())
		}
		if !strings.Contains(logs.String(), cr.MessageID) || strings.Contains(logs.String(), "123456789") {
			t.Errorf("%s: log = %q, want the message id and not the account number", name, logs.String())
		}
	}
}
