package inventory

import (
	"fmt"
	"maps"
	"runtime"
	"strings"
	"testing"
)

// sizeShapes are inventories of about MaxSize, each a shape a file can
// take: many hosts; many hosts and a cluster naming thousands that are
// none (its errors grew with the square of the file); one long string;
// many unknown keys; keys as deep as the cap allows, line after line;
// inline tables that deep; a long array.
var sizeShapes = map[string]func() string{
	"hosts": func() string {
		var b strings.Builder
		for i := 0; b.Len() < MaxSize-100; i++ {
			fmt.Fprintf(&b, "[[host]]\nname = \"h%d\"\naddress = \"10.%d.%d.%d\"\n", i, i>>16&255, i>>8&255, i&255)
		}
		return b.String()
	},
	"a cluster of names that are no host": func() string {
		var b strings.Builder
		for i := 0; i < 2500; i++ {
			fmt.Fprintf(&b, "[[host]]\nname = \"h%d\"\naddress = \"10.0.%d.%d\"\n", i, i>>8&255, i&255)
		}
		b.WriteString("[[cluster]]\nname = \"c\"\nprimary = \"h0\"\nreplicas = [")
		for i := 0; b.Len() < MaxSize-100; i++ {
			fmt.Fprintf(&b, "\"x%d\", ", i)
		}
		b.WriteString("]\n")
		return b.String()
	},
	"a long string": func() string {
		return oneHost + "user = \"" + strings.Repeat("a", MaxSize-100) + "\"\n"
	},
	"unknown keys": func() string {
		var b strings.Builder
		b.WriteString(oneHost)
		for i := 0; b.Len() < MaxSize-100; i++ {
			fmt.Fprintf(&b, "usr%d = 1\n", i)
		}
		return b.String()
	},
	"keys at the depth cap": func() string {
		var b strings.Builder
		for i := 0; b.Len() < MaxSize-200; i++ {
			fmt.Fprintf(&b, "k%d.%sa = 1\n", i, strings.Repeat("a.", MaxDepth-1))
		}
		return b.String() + oneHost
	},
	"inline tables at the depth cap": func() string {
		var b strings.Builder
		for i := 0; b.Len() < MaxSize-400; i++ {
			fmt.Fprintf(&b, "k%d = %s1%s\n", i, strings.Repeat("{a = ", MaxDepth), strings.Repeat("}", MaxDepth))
		}
		return b.String() + oneHost
	},
	"a long array": func() string {
		return oneHost + "allow_from = [" + strings.Repeat("\"10.0.0.0/8\", ", (MaxSize-200)/14) + "]\n"
	},
}

// TestSizesCostLittle: no inventory of up to MaxSize, of any shape, costs
// the controller more than 100 MB to check (what it allocates, counted by
// the runtime: the machine's load does not change it); each is refused or
// read, with its errors bounded; and one of a MiB is refused before it is
// decoded.
func TestSizesCostLittle(t *testing.T) {
	shapes := maps.Clone(sizeShapes)
	shapes["a MiB"] = func() string { return oneHost + strings.Repeat("# a comment\n", (1<<20)/12) }
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			src := shape()
			if len(src) > MaxSize && name != "a MiB" {
				t.Fatalf("the shape is %d bytes, over the cap", len(src))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Parse("inv.toml", "/tmp", src)
			runtime.ReadMemStats(&after)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 100<<20 {
				t.Errorf("%d bytes of input took %d MB", len(src), grew>>20)
			}
			if len(msg) > (MaxErrors+1)*1100 {
				t.Errorf("an error of %d KB", len(msg)>>10)
			}
			if name == "a MiB" && (err == nil || !strings.Contains(msg, "larger than 256 KiB")) {
				t.Errorf("a MiB: %.200v", err)
			}
		})
	}
}
