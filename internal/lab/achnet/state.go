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

// entryKey names an entry in the state: an originator's trace numbers
// restart each file creation date, so a trace number with the date
// (YYMMDD) of the file it came in.
func entryKey(trace, created string) string { return trace + "@" + created }

// latest is the state of the newest entry with a trace number, the one a
// dishonored return's original trace means.
func (st state) latest(trace string) entryState {
	var best string
	for k := range st.Entries {
		if d, ok := strings.CutPrefix(k, trace+"@"); ok && d > best {
			best = d
		}
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
