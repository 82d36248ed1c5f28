// Package walkthrough reads the walkthrough (docs/walkthrough.md; before
// it had a file of its own, the README), the shell blocks between
// <!-- quickstart:begin --> and <!-- quickstart:end -->, and runs it with
// bash against a running service, as a reader runs it against 'make run'.
// Its test (internal/testing/readme) keeps the walkthrough true against
// 'fundsource dev'; the upgrade check
// (internal/lab/upgrade) runs an older commit's walkthrough against that
// commit's binary on the newest schema. Both use it, so it lives with the
// development aids rather than inside either.
package walkthrough

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

const (
	beginMarker = "<!-- quickstart:begin -->"
	endMarker   = "<!-- quickstart:end -->"
)

// Quickstart returns the marked shell blocks of a README, in order, joined
// into one script.
func Quickstart(readme []byte) (string, error) {
	var blocks []string
	rest := string(readme)
	for {
		i := strings.Index(rest, beginMarker)
		if i < 0 {
			break
		}
		rest = rest[i+len(beginMarker):]
		j := strings.Index(rest, endMarker)
		if j < 0 {
			return "", fmt.Errorf("README: %s without %s", beginMarker, endMarker)
		}
		body := strings.TrimSpace(rest[:j])
		rest = rest[j+len(endMarker):]
		if !strings.HasPrefix(body, "```sh\n") || !strings.HasSuffix(body, "\n```") {
			return "", fmt.Errorf("README: a quickstart block is not one ```sh fence:\n%s", body)
		}
		blocks = append(blocks, strings.TrimSuffix(strings.TrimPrefix(body, "```sh\n"), "```"))
	}
	if strings.Contains(rest, endMarker) {
		return "", fmt.Errorf("README: %s without %s", endMarker, beginMarker)
	}
	if len(blocks) == 0 {
		return "", errors.New("README has no quickstart blocks")
	}
	if !strings.Contains(blocks[0], "set -eu") {
		return "", fmt.Errorf("the first quickstart block must start the script with set -eu:\n%s", blocks[0])
	}
	return strings.Join(blocks, "\n"), nil
}

// Done is what the walkthrough prints at its end.
const Done = "walkthrough done"

// Target is what a reader exports after 'make run' printed it.
type Target struct {
	Base      string // the service, SANDBOX_BASE_URL
	Sim       string // the provider simulator
	SecretKey string // the demo merchant's sandbox secret key
	PublicKey string // its sandbox public key
	Home      string // HOME of the shell: an empty folder
}

// Run runs script with bash, with nothing but PATH, HOME and the target in
// its environment, and returns its combined output. A script that did not
// print Done failed, whatever its exit status.
func Run(ctx context.Context, script string, t Target) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.Home,
		"BASE=" + t.Base,
		"SIM=" + t.Sim,
		"SK=" + t.SecretKey,
		"PK=" + t.PublicKey,
	}
	out, err := cmd.CombinedOutput()
	if err == nil && !strings.Contains(string(out), Done) {
		err = fmt.Errorf("the walkthrough did not reach its end (%q)", Done)
	}
	return string(out), err
}
