package mywire

import (
	"context"
	"database/sql/driver"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// AuthError is a login that pidb broke off before the password left: on a
// connection without TLS to another machine, the server at Addr asked for
// the password itself, which go-sql-driver/mysql would encrypt with a
// public key that the server hands out and nobody checks
// (caching_sha2_password's full authentication, sha256_password). Whoever
// answers in the server's place could hand out its own key and read the
// password. The server's flavour does not matter: what answers chooses the
// method.
type AuthError struct {
	Addr  string
	Asked string // what the server did, in words
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("the server at %s %s, on a connection without TLS; pidb sends the password only over TLS or through SSH, and sent nothing "+
		"(whoever answers could hand out its own key): use TLS (tls = true in the inventory, or --tls on) or --via ssh", e.Addr, e.Asked)
}

// Connector is the driver's connector for database/sql with cfg, logging in
// as Connect does.
func Connector(cfg *mysql.Config) (driver.Connector, error) {
	c, err := secure(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := mysql.NewConnector(c); err != nil {
		return nil, err
	}
	dial := c.DialFunc
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return connector{cfg: c, dial: dial}, nil
}

type connector struct {
	cfg  *mysql.Config
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, _, err := login(ctx, c.cfg, c.dial)
	return dc, err
}

func (connector) Driver() driver.Driver { return mysql.MySQLDriver{} }

// secure is a copy of cfg as pidb logs in with it: the driver logs nothing
// (Quiet), and no login hands the password to whoever answers: not in
// clear text (mysql_clear_password: AllowCleartextPasswords), nor hashed
// the pre-4.1 way (AllowOldPasswords), nor with TLS that falls back to the
// clear (AllowFallbackToPlaintext: a server, or whoever answers, that
// offers no TLS would get a login in the clear that login does not guard,
// as it was asked for TLS). mysql_native_password
// (AllowNativePasswords, the driver's default) stays: MariaDB's accounts
// use it, and it sends a proof of the password, never the password. TLS is
// cfg.TLS (sqldb.TLSConfig): a name of the driver's (tls=...) is refused.
func secure(cfg *mysql.Config) (*mysql.Config, error) {
	c := Quiet(cfg)
	c.AllowCleartextPasswords, c.AllowOldPasswords, c.AllowFallbackToPlaintext = false, false, false
	if c.TLS == nil && c.TLSConfig != "" && c.TLSConfig != "false" {
		return nil, fmt.Errorf("mywire: tls=%s: pidb gives the driver TLS as a *tls.Config (sqldb.TLSConfig)", c.TLSConfig)
	}
	return c, nil
}

// login opens and authenticates a connection with cfg (secure's) on a
// socket that dial makes: the driver's connection, and the socket. On a
// connection in the clear (inTheClear) the driver reads the login through
// a keyGuard, and an *AuthError is what broke it off.
func login(ctx context.Context, cfg *mysql.Config, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (driver.Conn, net.Conn, error) {
	c := cfg.Clone()
	clear := inTheClear(c)
	var raw net.Conn
	var g *keyGuard
	c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		raw = conn
		if err != nil || !clear {
			return conn, err
		}
		var wrapped net.Conn
		wrapped, g = guard(conn, addr)
		return wrapped, nil
	}
	cn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, nil, err
	}
	dc, err := cn.Connect(ctx)
	if err != nil {
		if g != nil && g.err != nil {
			return nil, nil, g.err
		}
		return nil, nil, err
	}
	return dc, raw, nil
}

// inTheClear reports whether a login with cfg crosses a network without
// TLS: over TCP to an address that is not this machine's. An SSH forward's
// local end is this machine's: SSH, which checked the host's key, carries
// the login the rest of the way, encrypted, and a public key that comes
// through it is the server's.
func inTheClear(cfg *mysql.Config) bool {
	if cfg.TLS != nil || (cfg.Net != "" && cfg.Net != "tcp" && cfg.Net != "tcp4" && cfg.Net != "tcp6") {
		return false
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return cfg.Addr != "" // the driver's default address is 127.0.0.1:3306
	}
	if host == "localhost" {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err != nil || !ip.IsLoopback()
}

// keyGuard reads the packets of a login in the clear as they come from the
// server, before the driver does, up to the login's end (an OK or ERR
// packet after the handshake); after that, reads pass through. It breaks
// the login off at an AuthMoreData packet other than
// caching_sha2_password's "fast authentication succeeded": "perform full
// authentication", or a public key (sha256_password, or
// caching_sha2_password's), either of which the driver answers with the
// password encrypted with the key it is sent. The driver takes a packet
// only once it has all of it, so breaking off within one is in time.
type keyGuard struct {
	net.Conn
	addr string
	err  *AuthError // set: every read fails with it
	done bool       // the login is over

	hdr  [4]byte
	nh   int  // the packet's header bytes so far
	size int  // its body's length
	pos  int  // its body's bytes so far
	n    int  // packets before it (0: it is the handshake)
	cont bool // it continues the one before, which had 2^24-1 bytes: its first bytes are not a packet's
	more bool // it is AuthMoreData (0x01)
}

// guard is conn read through a keyGuard, still a syscall.Conn where conn
// is one (the driver checks a pooled connection's socket through it).
func guard(conn net.Conn, addr string) (net.Conn, *keyGuard) {
	g := &keyGuard{Conn: conn, addr: addr}
	if sc, ok := conn.(syscall.Conn); ok {
		return sysGuard{g, sc}, g
	}
	return g, g
}

type sysGuard struct {
	*keyGuard
	sc syscall.Conn
}

func (s sysGuard) SyscallConn() (syscall.RawConn, error) { return s.sc.SyscallConn() }

func (g *keyGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.Conn.Read(p)
	if !g.done && n > 0 {
		if e := g.scan(p[:n]); e != nil {
			g.err = e
			return 0, e
		}
	}
	return n, err
}

// scan follows the packets through b.
func (g *keyGuard) scan(b []byte) *AuthError {
	for len(b) > 0 && !g.done {
		switch {
		case g.nh < 4:
			g.hdr[g.nh] = b[0]
			g.nh++
			b = b[1:]
			if g.nh == 4 {
				g.size, g.pos = int(g.hdr[0])|int(g.hdr[1])<<8|int(g.hdr[2])<<16, 0
				if g.size == 0 {
					g.end()
				}
			}
			continue
		case g.pos < 2 && g.n > 0 && !g.cont:
			if e := g.look(b[0]); e != nil {
				return e
			}
			g.pos++
			b = b[1:]
		default:
			k := min(len(b), g.size-g.pos)
			g.pos += k
			b = b[k:]
		}
		if g.pos == g.size {
			g.end()
		}
	}
	return nil
}

// end is the end of a packet.
func (g *keyGuard) end() {
	g.cont = g.size == 1<<24-1
	g.n++
	g.nh = 0
}

// look judges a byte at the start of a packet after the handshake.
func (g *keyGuard) look(c byte) *AuthError {
	if g.pos == 0 {
		g.more = c == 0x01
		switch {
		case c == 0x00 || c == 0xff: // OK or ERR: the login is over
			g.done = true
		case g.more && g.size != 2:
			return &AuthError{Addr: g.addr, Asked: "handed out a public key to encrypt the password with (sha256_password, caching_sha2_password)"}
		}
		return nil
	}
	if g.more && c != 0x03 {
		what := "asked for the password itself (caching_sha2_password's full authentication), which the driver would encrypt with a public key the server hands out"
		if c != 0x04 {
			what = fmt.Sprintf("asked for more authentication (0x%02x) than a proof of the password", c)
		}
		return &AuthError{Addr: g.addr, Asked: what}
	}
	return nil
}
