package ach

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"
)

// Inbound file kinds and statuses.
const (
	KindReturns   = "returns"   // returns, notifications of change, contested dishonors (NACHA)
	KindStatement = "statement" // the bank's account statement (ISO 20022 camt.053)
	KindUnknown   = "unknown"

	InboundApplied  = "applied"
	InboundRejected = "rejected"
)

// ErrMalformed marks a file the service cannot read: nothing of it was
// applied, and it is set aside for a person to look at.
var ErrMalformed = errors.New("malformed file")

// malformed wraps a reading error so that it is ErrMalformed and keeps
// its message.
type malformed struct{ err error }

func (m malformed) Error() string        { return m.err.Error() }
func (m malformed) Unwrap() error        { return m.err }
func (m malformed) Is(target error) bool { return target == ErrMalformed }

// Inbound is an inbound file as the service remembers it, by SHA-256.
type Inbound struct {
	SHA256     string          `json:"sha256"`
	Name       string          `json:"name"`
	Kind       string          `json:"kind"`
	Status     string          `json:"status"`
	Error      string          `json:"error,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	ReceivedAt time.Time       `json:"received_at"`
	// Duplicate: applied (or rejected) before, under this name or another;
	// nothing happened now.
	Duplicate bool `json:"duplicate"`
}

// InboundStore is the persistence of inbound files and reconciliation.
type InboundStore interface {
	// ClaimInbound records a file by its SHA-256 in the transaction, or
	// returns the record already there (false); a second process claiming
	// the same file waits until the first transaction ends.
	ClaimInbound(ctx context.Context, in Inbound) (Inbound, bool, error)
	// FinishInbound stores the outcome of a claimed file.
	FinishInbound(ctx context.Context, in Inbound) error
	// InboundFiles lists the newest inbound files first, at most limit.
	InboundFiles(ctx context.Context, limit int) ([]Inbound, error)
	// ACHFiles lists the newest files first, at most limit.
	ACHFiles(ctx context.Context, limit int) ([]FileSummary, error)
	// ClaimStatement records that the statement with <Stmt><Id> id was
	// read, from the file with SHA-256 digest; false, recording nothing,
	// when it was read before (from any file). A concurrent claim of the
	// same id waits until this transaction ends.
	ClaimStatement(ctx context.Context, id, digest string, at time.Time) (bool, error)
	InsertStatementLine(ctx context.Context, l StatementLine) (int64, error)
	// UnmatchedLines lists statement lines without a settlement booked
	// on or after since.
	UnmatchedLines(ctx context.Context, since string) ([]StatementLine, error)
	// MatchSettlement pairs line with an unmatched settlement of its
	// direction and amount dated on its booking date or up to
	// MatchDays before it (a file the bank read late), the closest date
	// first; false when none.
	MatchSettlement(ctx context.Context, line StatementLine, at time.Time) (bool, error)
	// SettleMatchedFiles marks settled the delivered files whose every
	// settlement is matched, and returns them.
	SettleMatchedFiles(ctx context.Context, at time.Time) ([]File, error)
	// SettledFilePayments lists the payments of a settled file, each with
	// the booking date of the line matched to its entry's settlement (the
	// file's effective date and the entry's direction on the account).
	SettledFilePayments(ctx context.Context, fileID string) ([]SettledPayment, error)
	// Reconciliation lists a date's statement lines and expected
	// settlements.
	Reconciliation(ctx context.Context, date string) ([]StatementLine, []Settlement, error)
	// UnmatchedCounts counts unmatched statement lines, and expected
	// settlements dated on or before the newest statement's booking date
	// that no line matched.
	UnmatchedCounts(ctx context.Context) (statement, service int64, err error)
}

// Poll lists the inbound files, downloads each one not seen before and
// applies it once (Receive); a file it cannot read is moved aside
// (Transport.Reject). It returns how many files it applied or rejected
// now. A transport or database failure leaves the file for the next poll.
func (o *Originator) Poll(ctx context.Context) (int, error) {
	files, err := o.transport.Inbound(ctx)
	if err != nil {
		return 0, fmt.Errorf("list inbound files: %w", err)
	}
	n := 0
	var failed []error
	for _, f := range files {
		key := f.Name + "\x00" + strconv.FormatInt(f.Size, 10) + "\x00" + f.ModTime.UTC().Format(time.RFC3339Nano)
		if _, ok := o.seen.Load(key); ok {
			continue // applied before by this process: no download
		}
		data, err := o.transport.Fetch(ctx, f.Name)
		if err != nil {
			failed = append(failed, fmt.Errorf("download inbound file %s: %w", f.Name, err))
			continue
		}
		in, err := o.Receive(ctx, f.Name, data)
		if err != nil {
			failed = append(failed, fmt.Errorf("apply inbound file %s: %w", f.Name, err))
			continue
		}
		if in.Status == InboundRejected {
			if err := o.transport.Reject(ctx, f.Name); err != nil {
				failed = append(failed, fmt.Errorf("set aside inbound file %s: %w", f.Name, err))
				continue
			}
		}
		o.seen.Store(key, true)
		if !in.Duplicate {
			n++
		}
	}
	o.refreshUnmatched(ctx)
	return n, errors.Join(failed...)
}

// Receive applies one inbound file once, by its SHA-256: a NACHA file of
// returns, notifications of change and contested dishonors through
// ImportReturns (its money also becomes settlements the statement is
// expected to show), a camt.053 statement through reconciliation. The
// file is claimed in a transaction held while it applies, so a second
// process with the same file waits and then finds it applied. A
// malformed file applies nothing and is recorded rejected; any other
// failure records nothing, and the file is applied again later (the
// import counts what it applied before as duplicates).
func (o *Originator) Receive(ctx context.Context, name string, data []byte) (Inbound, error) {
	sum := sha256.Sum256(data)
	in := Inbound{SHA256: hex.EncodeToString(sum[:]), Name: name, Kind: kindOf(data), Status: InboundApplied, ReceivedAt: o.now(ctx).UTC()}
	err := o.store.WithTx(ctx, func(tx Store) error {
		prior, claimed, err := tx.ClaimInbound(ctx, in)
		if err != nil {
			return err
		}
		if !claimed {
			in, in.Duplicate = prior, true
			return nil
		}
		var result any
		switch in.Kind {
		case KindStatement:
			result, err = o.reconcileTx(ctx, tx, in.SHA256, data)
		case KindReturns:
			result, err = o.importInbound(ctx, tx, in.SHA256, data)
		default:
			err = malformed{errors.New("neither a NACHA file nor an ISO 20022 camt.053 statement")}
		}
		if errors.Is(err, ErrMalformed) {
			in.Status, in.Error, result = InboundRejected, err.Error(), nil
		} else if err != nil {
			return err
		}
		if result != nil {
			if in.Result, err = json.Marshal(result); err != nil {
				return err
			}
		}
		return tx.FinishInbound(ctx, in)
	})
	if err != nil {
		return in, err
	}
	switch {
	case in.Duplicate:
	case in.Status == InboundRejected:
		o.rejected.Add(1)
		o.logger().Warn("inbound ACH file rejected: nothing of it was applied; it is set aside",
			slog.String("name", name), slog.String("sha256", in.SHA256), slog.String("kind", in.Kind), slog.String("error", in.Error))
	default:
		o.logger().Info("inbound ACH file applied", slog.String("name", name), slog.String("sha256", in.SHA256),
			slog.String("kind", in.Kind), slog.String("result", string(in.Result)))
	}
	return in, nil
}

// importInbound applies a return file (on the pool, in the import's own
// transactions) and records in tx the money it moves.
func (o *Originator) importInbound(ctx context.Context, tx Store, digest string, data []byte) (ReturnResult, error) {
	res, err := o.ImportReturns(ctx, bytes.NewReader(data))
	if err != nil {
		return res, err
	}
	in, err := readReceived(data)
	if err != nil {
		return res, malformed{err}
	}
	for _, s := range o.expected(in.File, false) {
		s.InboundSHA256 = digest
		if err := tx.InsertSettlement(ctx, s); err != nil {
			return res, err
		}
	}
	return res, o.matchOpen(ctx, tx)
}

// kindOf tells a statement (XML) from a NACHA file (records of 94
// characters starting with the file header's record type 1).
func kindOf(data []byte) string {
	t := bytes.TrimLeft(data, " \t\r\n\xef\xbb\xbf")
	switch {
	case len(t) > 0 && t[0] == '<':
		return KindStatement
	case len(t) > 0 && t[0] == '1':
		return KindReturns
	}
	return KindUnknown
}

// RejectedFiles counts inbound files rejected since the process started.
func (o *Originator) RejectedFiles() int64 { return o.rejected.Load() }
