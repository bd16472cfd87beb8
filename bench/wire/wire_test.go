package wire_test

import (
	"pidb/bench/wire"
	"pidb/bench/wire/mywire"
	"pidb/bench/wire/pgwire"
)

// Both wire clients are a wire.Conn: this file does not build where one
// of them is not.
var _ = []wire.Conn{(*pgwire.Conn)(nil), (*mywire.Conn)(nil)}
