package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Streamer is a Runner whose commands can read and write streams as they
// run (the SSH client's Stream).
type Streamer interface {
	Runner
	Stream(ctx context.Context, cmd string, in io.Reader, out io.Writer) (Result, error)
}

// Pipe runs fromCmd on one host and toCmd on another, the first's
// standard output fed to the second's standard input through the
// controller as it comes (hosts that cannot reach each other's shells, or
// should not: a dump from a primary into its replica). head, when given,
// comes before the stream. Either failing stops the other; the error names
// the side that failed first, with what it wrote to stderr.
func Pipe(ctx context.Context, from Streamer, fromCmd string, to Streamer, toCmd string, head []byte) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	fromErr := make(chan error, 1)
	go func() {
		err := func() error {
			if len(head) > 0 {
				if _, err := pw.Write(head); err != nil {
					return err
				}
			}
			_, err := from.Stream(ctx, fromCmd, nil, pw)
			return err
		}()
		if err != nil {
			err = fmt.Errorf("%s: %w", from.Host(), err)
			cancel()
		}
		pw.CloseWithError(err) // nil: the reader sees the end
		fromErr <- err
	}()
	_, toErr := to.Stream(ctx, toCmd, pr, io.Discard)
	if toErr != nil {
		toErr = fmt.Errorf("%s: %w", to.Host(), toErr)
		pr.CloseWithError(toErr) // the writer stops
		cancel()
	}
	ferr := <-fromErr
	switch {
	case ferr == nil:
		return toErr
	case toErr == nil:
		return ferr
	case errors.Is(ferr, context.Canceled) || errors.Is(ferr, io.ErrClosedPipe) || errors.Is(ferr, toErr):
		// the reader failed first, and the writer stopped for it
		return toErr
	}
	return errors.Join(ferr, toErr)
}
