package sanctions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func hexSum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

var loadedAt = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

func fixedNow() time.Time { return loadedAt }

// withListed is a generated list of n entries whose last is a listed
// person the test screens for.
func withListed(n int, seed uint64) []byte {
	sdn, _ := generated(n-1, 0, seed)
	return append(sdn, sdnRecord(n, "KARIMOV, Rustam Bakhtiyorovich", "individual", "SDGT] [SYRIA", "")...)
}

func TestOpenRefusesWhatIsNotTheTreasurysList(t *testing.T) {
	dir := t.TempDir()
	_, alt := generated(1200, 1200, 3)
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"empty file":         {nil, "no entries"},
		"alt.csv as sdn.csv": {alt, "5 fields, not the 12"},
		"999 entries":        {withListed(999, 1), "999 entries"},
		"a record cut short": {append(withListed(1200, 1), "1201,\"CUT, Short\",individual"...), "line 1201: 3 fields"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".csv")
		write(t, path, tc.data)
		_, err := Open(Files{SDN: path}, fixedNow)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want an error naming %s and saying %q", name, err, path, tc.want)
		}
	}
	if _, err := Open(Files{SDN: filepath.Join(dir, "missing.csv")}, fixedNow); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("missing file: got %v", err)
	}
}

func TestOpenReadsAConfiguredList(t *testing.T) {
	dir := t.TempDir()
	sdnPath, altPath := filepath.Join(dir, "sdn.csv"), filepath.Join(dir, "alt.csv")
	sdn := withListed(1000, 1) // the floor itself
	alt := []byte(altRecord(1000, 1, "aka", "KARIMOFF, Rustem") + altRecord(1, 2, "aka", "SOMEONE, Else"))
	write(t, sdnPath, sdn)
	write(t, altPath, alt)
	l, err := Open(Files{SDN: sdnPath, Alt: altPath}, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	want := Status{Entries: 1000, Aliases: 2, LoadedAt: loadedAt, SDNFile: sdnPath, SDNSHA256: hexSum(sdn), AltFile: altPath, AltSHA256: hexSum(alt)}
	if got := l.Status(); got != want {
		t.Errorf("status:\n got %+v\nwant %+v", got, want)
	}
	if m, ok := l.Screen(Person("Rustem", "Karimoff")); !ok || m.Entry.Num != "1000" {
		t.Errorf("alias: got %+v %v", m, ok)
	}
	if _, err := Open(Files{SDN: altPath}, fixedNow); err == nil || !strings.Contains(err.Error(), altPath) {
		t.Errorf("alt.csv as OFAC_SDN_FILE: got %v", err)
	}
	if _, err := Open(Files{SDN: sdnPath, Alt: sdnPath}, fixedNow); err == nil || !strings.Contains(err.Error(), "OFAC_ALT_FILE "+sdnPath) {
		t.Errorf("sdn.csv as OFAC_ALT_FILE: got %v", err)
	}
}

func TestOpenWithoutFileIsTheSample(t *testing.T) {
	l, err := Open(Files{}, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if st := l.Status(); st.Entries != 6 || st.SDNFile != "" || st.SDNSHA256 != hexSum(sample) {
		t.Errorf("status: %+v", st)
	}
	if changed, err := l.Reload(); changed || err != nil {
		t.Errorf("reload of the sample: %v %v", changed, err)
	}
}

// TestWatchReloadsChangedFiles ticks the watcher by hand: a changed file
// replaces the list, a refused one keeps it and is counted once, and the
// next good file is read.
func TestWatchReloadsChangedFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sdn.csv")
	first := withListed(1100, 1)
	write(t, path, first)
	now := loadedAt
	l, err := Open(Files{SDN: path}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tick := make(chan time.Time)
	type result struct {
		changed bool
		err     error
	}
	results := make(chan result)
	go l.Watch(ctx, tick, func(changed bool, err error) { results <- result{changed, err} })
	step := func() result {
		now = now.Add(time.Minute)
		tick <- now
		return <-results
	}

	if r := step(); r.changed || r.err != nil {
		t.Fatalf("unchanged file: %+v", r)
	}
	if l.Status().LoadedAt != loadedAt {
		t.Errorf("an unchanged file was loaded again")
	}

	second, _ := generated(1300, 0, 2) // the listed person is gone
	write(t, path, second)
	if r := step(); !r.changed || r.err != nil {
		t.Fatalf("changed file: %+v", r)
	}
	if st := l.Status(); st.Entries != 1300 || st.SDNSHA256 != hexSum(second) || !st.LoadedAt.Equal(loadedAt.Add(2*time.Minute)) {
		t.Errorf("after the change: %+v", st)
	}
	if _, ok := l.Screen(Person("Rustam", "Karimov")); ok {
		t.Error("the new list still holds the old list's entry")
	}

	for _, bad := range [][]byte{withListed(900, 3), nil} {
		write(t, path, bad)
		for range 2 {
			r := step()
			if r.changed || r.err == nil || !strings.Contains(r.err.Error(), path) {
				t.Fatalf("refused file: %+v", r)
			}
		}
		if st := l.Status(); st.Entries != 1300 || st.SDNSHA256 != hexSum(second) {
			t.Errorf("a refused file replaced the list: %+v", st)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := step(); r.changed || r.err == nil || !strings.Contains(r.err.Error(), "OFAC_SDN_FILE") {
			t.Fatalf("missing file: %+v", r)
		}
	}
	if got := l.ReloadFailures(); got != 3 {
		t.Errorf("reload failures: got %d, want 3 (each refused file once, and the missing one once)", got)
	}
	if _, ok := l.Screen(Person("Rustam", "Karimov")); ok || l.Len() != 1300 {
		t.Errorf("the list in use changed with the refused files")
	}

	write(t, path, first)
	if r := step(); !r.changed || r.err != nil {
		t.Fatalf("good file after refused ones: %+v", r)
	}
	if _, ok := l.Screen(Person("Rustam", "Karimov")); !ok {
		t.Error("the reloaded list does not hold its entry")
	}
	if st := l.Status(); st.ReloadFailures != 3 || st.Entries != 1100 {
		t.Errorf("status: %+v", st)
	}
}

// BenchmarkOpen opens files of the Treasury's size as the service does at
// start and on each reload that finds them changed: read, hashed, parsed
// and indexed (target: under a second).
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	sdn, alt := generated(15000, 10000, 1)
	files := Files{SDN: filepath.Join(dir, "sdn.csv"), Alt: filepath.Join(dir, "alt.csv")}
	if err := os.WriteFile(files.SDN, sdn, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(files.Alt, alt, 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Open(files, time.Now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReloadUnchanged is the minute's check when the files did not
// change: read and hashed, not parsed.
func BenchmarkReloadUnchanged(b *testing.B) {
	dir := b.TempDir()
	sdn, alt := generated(15000, 10000, 1)
	files := Files{SDN: filepath.Join(dir, "sdn.csv"), Alt: filepath.Join(dir, "alt.csv")}
	if err := os.WriteFile(files.SDN, sdn, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(files.Alt, alt, 0o600); err != nil {
		b.Fatal(err)
	}
	l, err := Open(files, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if changed, err := l.Reload(); changed || err != nil {
			b.Fatal(changed, err)
		}
	}
}

// FuzzLoad: whatever the files hold, Load refuses them or gives a list
// that screens.
func FuzzLoad(f *testing.F) {
	f.Add(sdnRecord(1, "KARIMOV, Rustam Bakhtiyorovich", "individual", "SDGT] [SYRIA", "DOB 1971."), altRecord(1, 2, "aka", "KARIMOFF, Rustem"))
	f.Add(sdnRecord(2, `LIMITED LIABILITY COMPANY "X"`, "", "IRAN", ""), "")
	f.Add("1,\"A\"B,-0-", "\x1a")
	f.Fuzz(func(t *testing.T, sdn, alt string) {
		l, err := Load(strings.NewReader(sdn), strings.NewReader(alt))
		if err != nil {
			return
		}
		if l.Len() == 0 {
			t.Fatal("a list without entries loaded")
		}
		l.Screen(Person("Rustam", "Karimov"), Business("X LLC"), Written(sdn))
	})
}
