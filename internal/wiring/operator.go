package wiring

import (
	"os/user"

	"github.com/fundsource/fundsource/internal/audit"
)

// Operator is the actor of an operator command: the operating-system
// user who runs it.
func Operator(getenv func(string) string) audit.Actor {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return audit.Operator(u.Username)
	}
	if name := getenv("USER"); name != "" {
		return audit.Operator(name)
	}
	return audit.Operator("operator")
}
