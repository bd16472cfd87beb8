package inventory

import (
	"os"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"pidb/usage"
)

// FuzzParse: whatever the file holds, Parse returns an inventory or an
// input error (the file and line, exit 2), never a panic; and what it
// accepts is whole: every host named, with an address and an SSH port.
// What the depth cap lets through decodes with key paths no longer than
// nesting counted (a table header's, then a key's under it, each at most
// the deepest level it saw): the scanner misses no nesting the decoder
// sees. The corpus holds 3,000 nested inline tables and a key of 3,000
// dotted parts, which Parse must refuse at once.
func FuzzParse(f *testing.F) {
	full, err := os.ReadFile("testdata/full.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(full))
	f.Add("[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_from = [\"0.0.0.0/0\"]\n")
	f.Add("[defaults]\ntls = false\n[[host]]\nname = \"pi\"\naddress = \"pi.local\"\nengine = \"mysql\"\n[[host.database]]\nname = \"shop\"\nowner = \"app\"\n")
	f.Add("[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_public = true\ntls = false\nallow_from = [\"203.0.113.0/24\", \"fd00::/8\"]\n")
	f.Add("a.b.c = {d.e = [{f = \"\"\"[{.\\\"\"\"\"}, '''[.'''']}\n[[g.h]]\n# [{.\ni = 1.5\n")
	f.Fuzz(func(t *testing.T, src string) {
		inv, err := Parse("inv.toml", "/tmp", src)
		if deepest, over := nesting(src, MaxDepth); over == 0 && len(src) <= 16<<10 {
			var doc any
			if md, err := toml.Decode(src, &doc); err == nil {
				for _, k := range md.Keys() {
					if len(k) > 2*deepest+1 {
						t.Fatalf("key %s is %d parts long, and nesting counted %d levels at the deepest", k, len(k), deepest)
					}
				}
			}
		}
		if err != nil {
			if !usage.Is(err) {
				t.Fatalf("not an input error: %T %v", err, err)
			}
			if strings.Contains(err.Error(), "levels deep") && len(src) <= MaxSize && !strings.Contains(err.Error(), "inv.toml:") {
				t.Fatalf("the nesting refused without its line: %v", err)
			}
			return
		}
		for _, h := range inv.Hosts {
			if h.Name == "" || h.Address == "" || h.Port < 1 || h.Port > 65535 {
				t.Fatalf("accepted a host that is not whole: %+v", h)
			}
		}
	})
}
