package web

import (
	"net"
	"sync"
	"sync/atomic"
)

// ConnCap is a listener that serves at most a fixed number of connections
// at once. A connection over the cap is accepted and closed at once, before
// anything of it is read: the client learns at the first byte that the
// server is full instead of waiting in the kernel's queue, and an idle
// keep-alive flood cannot grow the process past its memory limit, since
// each open connection holds its buffers and goroutine until it closes.
type ConnCap struct {
	net.Listener
	max     int64
	open    atomic.Int64
	refused atomic.Int64
}

// CapConnections wraps ln so that at most limit of its connections are
// open at once (a limit below 1 means 1).
func CapConnections(ln net.Listener, limit int) *ConnCap {
	return &ConnCap{Listener: ln, max: int64(max(limit, 1))}
}

// Accept returns the next connection under the cap, closing those over it.
func (l *ConnCap) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			l.refused.Add(1)
			_ = c.Close()
			continue
		}
		return &cappedConn{Conn: c, cap: l}, nil
	}
}

// Open is how many connections are open now.
func (l *ConnCap) Open() int64 { return l.open.Load() }

// Refused is how many connections were closed at accept, being over the cap.
func (l *ConnCap) Refused() int64 { return l.refused.Load() }

// cappedConn gives its place back once, however often it is closed.
type cappedConn struct {
	net.Conn
	cap  *ConnCap
	once sync.Once
}

func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.cap.open.Add(-1) })
	return err
}
