package merchant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
)

// SessionPrefix starts a dashboard session's secret id.
const SessionPrefix = "ses_"

// Session is a dashboard sign-in as stored: never its id, only the id's
// SHA-256.
type Session struct {
	IDHash     []byte
	MerchantID string
	CreatedAt  time.Time // UTC
	LastSeenAt time.Time // UTC; updated at most once a minute
	IP         string    // the client address at sign-in
	UserAgent  string    // at most 256 bytes
}

// SessionStore keeps dashboard sessions.
type SessionStore interface {
	InsertSession(ctx context.Context, s Session) error
	// SessionByHash returns a session; errs.NotFound when it ended.
	SessionByHash(ctx context.Context, idHash []byte) (Session, error)
	TouchSession(ctx context.Context, idHash []byte, at time.Time) error
	DeleteSession(ctx context.Context, idHash []byte) error
	// DeleteSessionsExcept ends every session of a merchant but keep's.
	DeleteSessionsExcept(ctx context.Context, merchantID string, keep []byte) (int64, error)
	// Sessions lists a merchant's sessions, newest first.
	Sessions(ctx context.Context, merchantID string) ([]Session, error)
	// DeleteSessionsBefore ends sessions created before created or last
	// seen before seen.
	DeleteSessionsBefore(ctx context.Context, created, seen time.Time) (int64, error)
	// SetSessionReveal keeps pad with the session; errs.NotFound when it ended.
	SetSessionReveal(ctx context.Context, idHash, pad []byte) error
	// TakeSessionReveal returns the session's pad and clears it; nil when
	// it has none.
	TakeSessionReveal(ctx context.Context, idHash []byte) ([]byte, error)
}

// HoldReveal masks secret for the session of id with a fresh random pad
// kept on the server, and returns it masked, for the session's cookie.
// TakeReveal unmasks it once: the pad is gone after, so the cookie,
// replayed, shows nothing; a database reader sees only the pad.
func (s *Service) HoldReveal(ctx context.Context, id, secret string) ([]byte, error) {
	pad := make([]byte, len(secret))
	_, _ = rand.Read(pad)
	if err := s.store.SetSessionReveal(ctx, SessionHash(id), pad); err != nil {
		return nil, fmt.Errorf("hold secret for the dashboard: %w", err)
	}
	return xorBytes([]byte(secret), pad), nil
}

// TakeReveal unmasks a secret HoldReveal masked for the session of id, the
// first time only; "" after that, or for a mask of another length.
func (s *Service) TakeReveal(ctx context.Context, id string, masked []byte) (string, error) {
	pad, err := s.store.TakeSessionReveal(ctx, SessionHash(id))
	if err != nil {
		return "", fmt.Errorf("take the secret held for the dashboard: %w", err)
	}
	if len(pad) != len(masked) || len(pad) == 0 {
		return "", nil
	}
	return string(xorBytes(masked, pad)), nil
}

func xorBytes(a, b []byte) []byte {
	out := make([]byte, len(a))
	for i := range a {
		out[i] = a[i] ^ b[i]
	}
	return out
}

// SessionHash is what is stored of a session id.
func SessionHash(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// clip keeps at most n bytes of s, cut at a character boundary.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// StartSession records a sign-in of merchantID from ip with userAgent,
// with its audit event, and returns the session's secret id (256 random
// bits), for the cookie alone.
func (s *Service) StartSession(ctx context.Context, merchantID, ip, userAgent string) (string, error) {
	id := ids.Secret(SessionPrefix)
	now := s.now().UTC()
	ip = clip(ip, 64)
	err := s.store.WithTx(ctx, func(tx Store) error {
		err := tx.InsertSession(ctx, Session{IDHash: SessionHash(id), MerchantID: merchantID, CreatedAt: now, LastSeenAt: now,
			IP: ip, UserAgent: clip(userAgent, 256)})
		if err != nil {
			return fmt.Errorf("insert a session of merchant %s: %w", merchantID, err)
		}
		if err := tx.RecordAudit(ctx, audit.Account(merchantID, audit.DashboardSignedIn, audit.DashboardUser(merchantID, ip), nil)); err != nil {
			return fmt.Errorf("record the sign-in of merchant %s: %w", merchantID, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// SessionLimits bound a session's life: IdleTimeout without a request,
// MaxAge after sign-in.
type SessionLimits struct {
	IdleTimeout, MaxAge time.Duration
}

// ErrSessionExpired is the answer for a session past its limits.
var ErrSessionExpired = errs.New(errs.Unauthorized, "The session expired.")

// seenEvery is how stale a session's last-seen time may get before a
// request records it again: idle expiry is exact to this much.
const seenEvery = time.Minute

// ResumeSession checks the session of a cookie's id: it must exist (sign-
// out and revocation delete it) and be within limits (an expired one is
// ended). It records the request as the session's last use, at most once
// a minute, and returns the session with its merchant.
func (s *Service) ResumeSession(ctx context.Context, id string, limits SessionLimits) (Session, Merchant, error) {
	if !strings.HasPrefix(id, SessionPrefix) {
		return Session{}, Merchant{}, errs.New(errs.Unauthorized, "No session.")
	}
	hash := SessionHash(id)
	sess, err := s.store.SessionByHash(ctx, hash)
	if errs.Is(err, errs.NotFound) {
		return Session{}, Merchant{}, errs.New(errs.Unauthorized, "The session ended.")
	}
	if err != nil {
		return Session{}, Merchant{}, fmt.Errorf("read a dashboard session: %w", err)
	}
	now := s.now().UTC()
	if now.Sub(sess.LastSeenAt) > limits.IdleTimeout || now.Sub(sess.CreatedAt) > limits.MaxAge {
		if err := s.store.DeleteSession(ctx, hash); err != nil {
			return Session{}, Merchant{}, fmt.Errorf("end an expired session of merchant %s: %w", sess.MerchantID, err)
		}
		return Session{}, Merchant{}, ErrSessionExpired
	}
	if now.Sub(sess.LastSeenAt) >= seenEvery {
		if err := s.store.TouchSession(ctx, hash, now); err != nil {
			return Session{}, Merchant{}, fmt.Errorf("record the use of a session of merchant %s: %w", sess.MerchantID, err)
		}
		sess.LastSeenAt = now
	}
	m, err := s.Merchant(ctx, sess.MerchantID)
	if err != nil {
		return Session{}, Merchant{}, err
	}
	return sess, m, nil
}

// EndSession ends the session of a cookie's id (sign-out) from ip;
// ending one that already ended is no error and records nothing.
func (s *Service) EndSession(ctx context.Context, id, ip string) error {
	err := s.store.WithTx(ctx, func(tx Store) error {
		sess, err := tx.SessionByHash(ctx, SessionHash(id))
		if err != nil {
			return fmt.Errorf("read a dashboard session: %w", err)
		}
		if err := tx.DeleteSession(ctx, sess.IDHash); err != nil {
			return fmt.Errorf("end a session of merchant %s: %w", sess.MerchantID, err)
		}
		if err := tx.RecordAudit(ctx, audit.Account(sess.MerchantID, audit.DashboardSignedOut, audit.DashboardUser(sess.MerchantID, clip(ip, 64)), nil)); err != nil {
			return fmt.Errorf("record the sign-out of merchant %s: %w", sess.MerchantID, err)
		}
		return nil
	})
	if errs.Is(err, errs.NotFound) {
		return nil
	}
	return err
}

// EndOtherSessions ends every session of the merchant except the one of
// id, and returns how many ended.
func (s *Service) EndOtherSessions(ctx context.Context, merchantID, id string, by audit.Actor) (int64, error) {
	var n int64
	err := s.store.WithTx(ctx, func(tx Store) error {
		var err error
		if n, err = tx.DeleteSessionsExcept(ctx, merchantID, SessionHash(id)); err != nil {
			return fmt.Errorf("end the other sessions of merchant %s: %w", merchantID, err)
		}
		if err := tx.RecordAudit(ctx, audit.Account(merchantID, audit.DashboardSessionsRevoked, by, map[string]string{"sessions_ended": strconv.FormatInt(n, 10)})); err != nil {
			return fmt.Errorf("record the end of merchant %s's other sessions: %w", merchantID, err)
		}
		return nil
	})
	return n, err
}

// PurgeSessions deletes the sessions past their limits (a sweep: each is
// refused anyway when next used).
func (s *Service) PurgeSessions(ctx context.Context, limits SessionLimits) (int64, error) {
	now := s.now().UTC()
	n, err := s.store.DeleteSessionsBefore(ctx, now.Add(-limits.MaxAge), now.Add(-limits.IdleTimeout))
	if err != nil {
		return 0, fmt.Errorf("purge expired sessions: %w", err)
	}
	return n, nil
}

// Sessions lists the merchant's sessions, newest first.
func (s *Service) Sessions(ctx context.Context, merchantID string) ([]Session, error) {
	ss, err := s.store.Sessions(ctx, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list the sessions of merchant %s: %w", merchantID, err)
	}
	return ss, nil
}

// ChangePassword replaces the merchant's password after checking the
// current one, and ends every other session: whoever knew the old
// password is signed out.
func (s *Service) ChangePassword(ctx context.Context, merchantID, sessionID, current, next string, by audit.Actor) error {
	m, err := s.Merchant(ctx, merchantID)
	if err != nil {
		return err
	}
	if s.hash.Compare(m.PasswordHash, current) != nil {
		return errs.Invalid("current_password", "The current password is not right.")
	}
	if e, ok := errs.As(checkPassword(next)); ok {
		return errs.Invalid("new_password", "The new "+strings.ToLower(e.Message[:1])+e.Message[1:])
	}
	return s.store.WithTx(ctx, func(tx Store) error {
		if err := s.setPassword(ctx, tx, merchantID, next); err != nil {
			return err
		}
		n, err := tx.DeleteSessionsExcept(ctx, merchantID, SessionHash(sessionID))
		if err != nil {
			return fmt.Errorf("end the other sessions of merchant %s: %w", merchantID, err)
		}
		if err := tx.RecordAudit(ctx, audit.Account(merchantID, audit.DashboardPasswordChanged, by, map[string]string{"sessions_ended": strconv.FormatInt(n, 10)})); err != nil {
			return fmt.Errorf("record the password change of merchant %s: %w", merchantID, err)
		}
		return nil
	})
}
