package sanctions

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// MinEntries is the fewest entries a configured sdn.csv may have: the
// Treasury's list has many thousands, so fewer is a truncated or wrong
// file.
const MinEntries = 1000

// Files name the list's files: sdn.csv (SDN, OFAC_SDN_FILE) and, when
// set, alt.csv (Alt, OFAC_ALT_FILE). An empty SDN is the embedded sample.
type Files struct {
	SDN string
	Alt string
}

// List is the SDN list in use; safe for concurrent use. Reload replaces
// it as a whole, so a screening reads one version of the list.
type List struct {
	files Files
	now   func() time.Time
	cur   atomic.Pointer[snapshot]
	state atomic.Pointer[Status]

	mu      sync.Mutex // serializes reloads
	refused [2]string  // the files' sums last refused, guarded by mu
	lastErr error      // why, guarded by mu

	failures atomic.Int64
}

// Status describes the list in use.
type Status struct {
	Entries  int       `json:"entries"`
	Aliases  int       `json:"aliases"`
	LoadedAt time.Time `json:"loaded_at"` // UTC
	// SDNFile and AltFile are the files read ("" for the embedded sample,
	// and without alt.csv); SDNSHA256 and AltSHA256 their SHA-256, hex.
	SDNFile   string `json:"sdn_file"`
	SDNSHA256 string `json:"sdn_sha256"`
	AltFile   string `json:"alt_file,omitempty"`
	AltSHA256 string `json:"alt_sha256,omitempty"`
	// ReloadFailures counts the changed files refused since the start.
	ReloadFailures int64 `json:"reload_failures"`
}

//go:embed sample.csv
var sample []byte

// Embedded returns the embedded sample list of fictitious names.
func Embedded() *List {
	s, err := load(bytes.NewReader(sample), nil, "sample.csv", "")
	if err != nil {
		panic(fmt.Sprintf("sanctions: embedded sample: %v", err))
	}
	l := &List{now: time.Now}
	l.cur.Store(s)
	l.state.Store(&Status{Entries: len(s.entries), LoadedAt: time.Now().UTC(), SDNSHA256: sum(sample)})
	return l
}

// Open loads the list of files, or the embedded sample when files.SDN is
// empty; now stamps loaded_at. A configured list is refused when it is
// not in the published layout or has fewer than MinEntries entries.
func Open(files Files, now func() time.Time) (*List, error) {
	if files.SDN == "" {
		return Embedded(), nil
	}
	l := &List{files: files, now: now}
	if _, err := l.reload(); err != nil {
		return nil, err
	}
	return l, nil
}

// Reload reads the files again and, when they changed, replaces the list
// with theirs. Files that are refused leave the list as it was, are
// counted (ReloadFailures) once, and return why until they change again.
// It reports whether the list changed.
func (l *List) Reload() (bool, error) {
	if l.files.SDN == "" {
		return false, nil
	}
	return l.reload()
}

func (l *List) reload() (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sdn, err := os.ReadFile(l.files.SDN)
	if err != nil {
		err = fmt.Errorf("load sanctions list: OFAC_SDN_FILE: %w", err)
		return false, l.refuse([2]string{err.Error()}, err)
	}
	var alt []byte
	if l.files.Alt != "" {
		if alt, err = os.ReadFile(l.files.Alt); err != nil {
			err = fmt.Errorf("load sanctions list: OFAC_ALT_FILE: %w", err)
			return false, l.refuse([2]string{err.Error()}, err)
		}
	}
	sums := [2]string{sum(sdn), ""}
	if alt != nil {
		sums[1] = sum(alt)
	}
	if st := l.state.Load(); st != nil && st.SDNSHA256 == sums[0] && st.AltSHA256 == sums[1] {
		return false, nil
	}
	if sums == l.refused {
		return false, l.lastErr // counted when first refused
	}
	var altR io.Reader
	if alt != nil {
		altR = bytes.NewReader(alt)
	}
	sdnName := "OFAC_SDN_FILE " + l.files.SDN
	s, err := load(bytes.NewReader(sdn), altR, sdnName, "OFAC_ALT_FILE "+l.files.Alt)
	if err == nil && len(s.entries) < MinEntries {
		err = fmt.Errorf("%s: %d entries, where the Treasury's sdn.csv has more than %d (a truncated download, or not sdn.csv)",
			sdnName, len(s.entries), MinEntries)
	}
	if err != nil {
		return false, l.refuse(sums, fmt.Errorf("load sanctions list: %w", err))
	}
	l.cur.Store(s)
	l.state.Store(&Status{Entries: len(s.entries), Aliases: s.aliases, LoadedAt: l.now().UTC(),
		SDNFile: l.files.SDN, SDNSHA256: sums[0], AltFile: l.files.Alt, AltSHA256: sums[1]})
	l.refused = [2]string{}
	return true, nil
}

// refuse records that the files with sums (for files that cannot be
// read: why) were refused for err, counting them when they are not the
// files refused last; it returns err.
func (l *List) refuse(sums [2]string, err error) error {
	if sums != l.refused {
		l.failures.Add(1)
	}
	l.refused, l.lastErr = sums, err
	return err
}

// Watch reloads the list at each tick until ctx ends (the service ticks
// every minute), telling report what each reload did.
func (l *List) Watch(ctx context.Context, tick <-chan time.Time, report func(changed bool, err error)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			changed, err := l.Reload()
			if report != nil {
				report(changed, err)
			}
		}
	}
}

// Status describes the list in use.
func (l *List) Status() Status {
	st := *l.state.Load()
	st.ReloadFailures = l.failures.Load()
	return st
}

// Len is the number of entries of the list in use.
func (l *List) Len() int { return len(l.cur.Load().entries) }

// Aliases is the number of aliases of the list in use.
func (l *List) Aliases() int { return l.cur.Load().aliases }

// ReloadFailures is the number of changed files refused since the start.
func (l *List) ReloadFailures() int64 { return l.failures.Load() }

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
