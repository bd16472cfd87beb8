package netx

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// byteSize frames are one length byte (the whole frame's) then the rest.
func byteSize(h []byte) (int, error) {
	if h[0] < 1 {
		return 0, errors.New("bad length")
	}
	return int(h[0]), nil
}

func TestFrames(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	frames := [][]byte{{3, 'a', 'b'}, {1}, append([]byte{40}, bytes.Repeat([]byte{'x'}, 39)...), {2, 'z'}}
	go func() {
		// one byte per write, so every frame arrives split
		for _, f := range frames {
			for i := range f {
				if _, err := server.Write(f[i : i+1]); err != nil {
					return
				}
			}
		}
		server.Close()
	}()
	f := NewFrames(8, 1, byteSize) // smaller than the 40-byte frame: it grows
	var got [][]byte
	for {
		msg, ok, err := f.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = append(got, append([]byte(nil), msg...))
			continue
		}
		if _, err := f.Read(client); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
	}
	if len(got) != len(frames) || f.Buffered() != 0 {
		t.Fatalf("%d frames, %d bytes left; want %d, 0", len(got), f.Buffered(), len(frames))
	}
	for i := range frames {
		if !bytes.Equal(got[i], frames[i]) {
			t.Errorf("frame %d: %q, want %q", i, got[i], frames[i])
		}
	}
	bad := NewFrames(8, 1, byteSize)
	bad.in[0], bad.n = 0, 1
	if _, _, err := bad.Next(); err == nil {
		t.Error("a bad header: no error")
	}
}

// TestFramesGrowWithWhatCame: a header that claims a huge message grows
// the buffer with the bytes that came (twice them at most), not with the
// claim; a claim beyond MaxMessage is an error at once.
func TestFramesGrowWithWhatCame(t *testing.T) {
	four := func(h []byte) (int, error) { return int(h[0])<<24 | int(h[1])<<16 | int(h[2])<<8 | int(h[3]), nil }
	in := append([]byte{0x03, 0, 0, 0}, bytes.Repeat([]byte{'x'}, 100)...) // 48 MiB claimed, 104 bytes sent
	f := NewFrames(16, 4, four)
	r := bytes.NewReader(in)
	for {
		if _, ok, err := f.Next(); ok || err != nil {
			t.Fatalf("a message out of 104 bytes: %v %v", ok, err)
		}
		n, err := r.Read(f.in[f.n:])
		f.n += n
		if err != nil || r.Len() == 0 {
			break
		}
	}
	f.Next()
	if len(f.in) > 2*len(in) {
		t.Errorf("the buffer grew to %d bytes for %d that came", len(f.in), len(in))
	}
	huge := NewFrames(16, 4, four)
	huge.n = copy(huge.in, []byte{0x7f, 0, 0, 0})
	if _, _, err := huge.Next(); err == nil || !strings.Contains(err.Error(), "not the server's protocol") {
		t.Errorf("2 GiB claimed: %v", err)
	}
}
