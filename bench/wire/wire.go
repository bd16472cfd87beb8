// Package wire is what the workloads' two wire clients have in common:
// pgwire.Conn (PostgreSQL's protocol) and mywire.Conn (the MySQL
// family's) are both a Conn, so that a workload's client loop is written
// once for both engines.
package wire

// Conn is one connection of a lean wire client: the workload puts its
// statements in the request (each client its own way: a query's text, a
// prepared statement's parameters), Send writes the request whole, and
// Receive reads what has come of the answers. On a non-blocking socket
// (Fd, for the driver's poller) Receive reports whether the answers are
// complete; on a blocking one it waits for all of them.
type Conn interface {
	Send() error
	Receive() (done bool, err error)
	// Broken says the connection cannot be used again: an I/O error, or
	// an answer cut off
	Broken() bool
	Fd() int
	// Interrupt asks the server to stop what the connection runs, from
	// another goroutine (the run's end)
	Interrupt()
	Close() error
}
