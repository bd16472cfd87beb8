// Package usage is pidb's one kind of error that is the user's input, not
// a host's failure: a flag, an argument or an inventory that pidb refuses
// before it touches any host. The command line maps it to exit code 2.
package usage

import (
	"errors"
	"fmt"
)

// Error is input pidb refuses: at a line of a file (an inventory's), in a
// file (Line 0), or anywhere else (no File). Its text is Msg, else Err's.
type Error struct {
	File string
	Line int
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, msg)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf is input refused, in words.
func Errorf(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}

// Wrap marks err as input refused; nil stays nil.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err}
}

// Is reports whether err holds input refused: exit code 2.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
