package postgres

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/lib/pq"
)

// ConnString is the connection string the service opens for databaseURL:
// any form lib/pq accepts (key=value, a postgres:// URL, several hosts in
// host=h1,h2 port=p1,p2 or in ?port=p1,p2), plus the multi-host URL
// postgres://h1:p1,h2:p2/db that pg_autoctl show uri and libpq accept but
// lib/pq does not (nor a percent-encoded socket directory as the host),
// rewritten to the key=value form.
//
// It adds connect_timeout=5 when none is given, so an unreachable host
// costs a bounded wait, and target_session_attrs=read-write when several
// hosts are given without it: the service writes, so it must land on the
// primary, never on whichever standby answers first.
func ConnString(databaseURL string) (string, error) {
	dsn := databaseURL
	if start, end, ok := multiHostURL(dsn); ok {
		kv, err := rewriteMultiHostURL(dsn, start, end)
		if err != nil {
			return "", fmt.Errorf("database URL: %w", err)
		}
		dsn = kv
	}
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		return "", fmt.Errorf("database URL: %w", err)
	}
	if cfg.ConnectTimeout == 0 && !strings.Contains(dsn, "connect_timeout") {
		dsn = withParam(dsn, "connect_timeout", "5")
	}
	if len(cfg.Multi) > 0 && cfg.TargetSessionAttrs == "" {
		dsn = withParam(dsn, "target_session_attrs", string(pq.TargetSessionAttrsReadWrite))
	}
	return dsn, nil
}

func isURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// multiHostURL finds the host list of a postgres:// URL, dsn[start:end],
// and reports whether lib/pq would misread it: several hosts (h1:p1,h2:p2),
// or a percent-encoded one (a socket directory, %2Fvar%2Frun%2Fpostgresql).
func multiHostURL(dsn string) (start, end int, ok bool) {
	if !isURL(dsn) {
		return 0, 0, false
	}
	start = strings.Index(dsn, "://") + 3
	end = len(dsn)
	if i := strings.IndexAny(dsn[start:], "/?#"); i >= 0 {
		end = start + i
	}
	if i := strings.LastIndex(dsn[start:end], "@"); i >= 0 {
		start += i + 1
	}
	return start, end, strings.ContainsAny(dsn[start:end], ",%")
}

// rewriteMultiHostURL turns postgres://[user[:password]@]h1[:p1],h2[:p2]/db?k=v
// into user=… password=… host=h1,h2 port=p1,p2 dbname=db k=v. A host
// without a port takes 5432 when others name theirs (lib/pq wants one port
// for all or one per host).
func rewriteMultiHostURL(dsn string, start, end int) (string, error) {
	hostList := dsn[start:end]
	// The rest of the URL parses once the hosts are replaced by one.
	single, err := url.Parse(dsn[:start] + "placeholder" + dsn[end:])
	if err != nil {
		return "", err
	}
	var hosts, ports []string
	anyPort := false
	for _, hp := range strings.Split(hostList, ",") {
		host, port, err := splitHostPort(hp)
		if err != nil {
			return "", err
		}
		if host, err = url.PathUnescape(host); err != nil {
			return "", fmt.Errorf("host %q: %w", hp, err)
		}
		if strings.ContainsAny(host, ", ") {
			return "", fmt.Errorf("host %q: a host name holds no comma or space", hp)
		}
		anyPort = anyPort || port != ""
		hosts, ports = append(hosts, host), append(ports, port)
	}
	var kv []string
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k+"="+quoteValue(v))
		}
	}
	if u := single.User; u != nil {
		pw, _ := u.Password()
		add("user", u.Username())
		add("password", pw)
	}
	add("host", strings.Join(hosts, ","))
	if anyPort {
		for i, p := range ports {
			if p == "" {
				ports[i] = "5432"
			}
		}
		add("port", strings.Join(ports, ","))
	}
	add("dbname", strings.TrimPrefix(single.Path, "/"))
	q := single.Query()
	for k := range q {
		if strings.ContainsAny(k, "= '\\") {
			return "", fmt.Errorf("parameter %q: not a parameter name", k)
		}
		add(k, q.Get(k))
	}
	return strings.Join(kv, " "), nil
}

// splitHostPort splits h, h:p, [v6] or [v6]:p.
func splitHostPort(hp string) (host, port string, err error) {
	if hp == "" {
		return "", "", fmt.Errorf("empty host in the host list")
	}
	if strings.HasPrefix(hp, "[") {
		end := strings.Index(hp, "]")
		if end < 0 {
			return "", "", fmt.Errorf("host %q: missing ]", hp)
		}
		var rest string
		host, rest = hp[1:end], hp[end+1:]
		switch {
		case rest == "":
			return host, "", nil
		case strings.HasPrefix(rest, ":"):
			port = rest[1:]
		default:
			return "", "", fmt.Errorf("host %q: unexpected %q after ]", hp, rest)
		}
	} else if i := strings.LastIndex(hp, ":"); i >= 0 {
		host, port = hp[:i], hp[i+1:]
	} else {
		return hp, "", nil
	}
	if port == "" || strings.Trim(port, "0123456789") != "" {
		return "", "", fmt.Errorf("host %q: port %q is not a number", hp, port)
	}
	return host, port, nil
}

// quoteValue quotes a key=value value the way lib/pq reads it.
func quoteValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// withParam adds k=v to a URL's query or to a key=value string.
func withParam(dsn, k, v string) string {
	if isURL(dsn) {
		if u, err := url.Parse(dsn); err == nil {
			q := u.Query()
			q.Set(k, v)
			u.RawQuery = q.Encode()
			return u.String()
		}
		return dsn
	}
	if strings.TrimSpace(dsn) == "" {
		return k + "=" + quoteValue(v)
	}
	return dsn + " " + k + "=" + quoteValue(v)
}
