package dashboard

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/audit"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// securityPageSize is how many audit events the security log shows at once.
const securityPageSize = 50

// actorNames are the audit actor types as people read them.
var actorNames = map[string]string{
	audit.ByAPIKey:        "API key",
	audit.ByDashboardUser: "Dashboard user",
	audit.ByOperator:      "Operator",
}

// securityPage is the security log: the environment's audit events and
// the account's, newest first.
func (s *Surface) securityPage(c *gin.Context) {
	in := current(c)
	p := pageOf(c, securityPageSize)
	evs, more, err := s.audit.List(c.Request.Context(), in.Scope, p)
	if err != nil {
		s.Fail(c, err)
		return
	}
	rows, page := rowsOf(c, evs, more, securityRow, func(e audit.Event) string { return e.ID })
	s.Page(c, http.StatusOK, view.SecurityPage(s.frame(c, "Security log", "security"), view.Security{Rows: rows, Page: page}))
}

func securityRow(e audit.Event) view.SecurityRow {
	var details []string
	for _, k := range slices.Sorted(maps.Keys(e.Details)) {
		details = append(details, strings.ReplaceAll(k, "_", " ")+": "+e.Details[k])
	}
	ip, env := e.Actor.IP, ""
	if ip == "" {
		ip = "—"
	}
	if e.Env == "" {
		env = "Whole account"
	}
	return view.SecurityRow{ID: e.ID, Time: shortTime(e.CreatedAt), Action: e.Action, Actor: actorNames[e.Actor.Type],
		ActorID: e.Actor.ID, IP: ip, Details: strings.Join(details, "; "), Env: env}
}
