package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/wiring"
)

const sanctionsUsage = `Usage:
  fundsource sanctions status [--json]
`

// runSanctions is 'sanctions status': it loads the list the
// configuration names (OFAC_SDN_FILE, OFAC_ALT_FILE) as the server does,
// refusing it for the same reasons, and prints what it holds. It needs
// no database.
func runSanctions(_ context.Context, args []string, io IO) error {
	err := errors.New("missing subcommand status")
	if len(args) > 0 && args[0] == "status" {
		var asJSON bool
		if asJSON, err = onlyJSONFlag(args[1:]); err == nil {
			return sanctionsStatus(io, asJSON)
		}
	}
	fmt.Fprintf(io.Stderr, "fundsource sanctions: %v\n\n%s", err, sanctionsUsage)
	return fmt.Errorf("%w: %v", ErrUsage, err)
}

func sanctionsStatus(io IO, asJSON bool) error {
	cfg, err := config.Load(io.Getenv)
	if err != nil {
		return err
	}
	l, err := wiring.OpenSanctions(cfg, wiring.Clock)
	if err != nil {
		return err
	}
	st := l.Status()
	if asJSON {
		return json.NewEncoder(io.Stdout).Encode(st)
	}
	var b strings.Builder
	file := st.SDNFile
	if file == "" {
		file = "(the embedded sample of fictitious names)"
	}
	fmt.Fprintf(&b, "entries: %d\naliases: %d\nloaded_at: %s\nsdn_file: %s\nsdn_sha256: %s\n",
		st.Entries, st.Aliases, st.LoadedAt.Format(time.RFC3339), file, st.SDNSHA256)
	if st.AltFile != "" {
		fmt.Fprintf(&b, "alt_file: %s\nalt_sha256: %s\n", st.AltFile, st.AltSHA256)
	}
	_, err = fmt.Fprint(io.Stdout, b.String())
	return err
}
