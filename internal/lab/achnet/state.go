package achnet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// entryKey names an entry in the state: a trace number with the date
// (YYMMDD) of the file it came in. Originators that restart their trace
// sequence each file date, and those whose sequence wraps, send the same
// trace number again on another date, so the trace number alone does not
// name an entry.
func entryKey(trace, created string) string { return trace + "@" + created }

// returned is the state of the entry a dishonored return's original trace
// number means: the newest entry with that trace number the network
// returned (another entry may carry the same trace on another date), else
// the newest with it.
func (st state) returned(trace string) entryState {
	var best, bestReturned string
	for k, es := range st.Entries {
		d, ok := strings.CutPrefix(k, trace+"@")
		if !ok {
			continue
		}
		best = max(best, d)
		if isReturn(es.Answer) {
			bestReturned = max(bestReturned, d)
		}
	}
	if bestReturned != "" {
		return st.Entries[entryKey(trace, bestReturned)]
	}
	return st.Entries[entryKey(trace, best)]
}

func (n *Network) load() (state, error) {
	st := state{Files: map[string]fileState{}, Entries: map[string]entryState{}}
	data, err := os.ReadFile(n.State)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("state file %s: %w", n.State, err)
	}
	if st.Files == nil {
		st.Files = map[string]fileState{}
	}
	if st.Entries == nil {
		st.Entries = map[string]entryState{}
	}
	return st, nil
}

func (n *Network) save(st state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomically(filepath.Dir(n.State), filepath.Base(n.State), append(data, '\n'))
}

// writeAtomically puts data at dir/name so that a reader of the folder
// (the import) sees either nothing or the whole file; only its owner may
// read it, as it holds account numbers.
func writeAtomically(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
