package inventory

import (
	"os"
	"testing"
)

// FuzzParse: whatever the file holds, Parse returns an inventory or an
// input error (the file and line, exit 2), never a panic; and what it
// accepts is whole: every host named, with an address and an SSH port.
func FuzzParse(f *testing.F) {
	full, err := os.ReadFile("testdata/full.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(full))
	f.Add("[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_from = [\"0.0.0.0/0\"]\n")
	f.Add("[defaults]\ntls = false\n[[host]]\nname = \"pi\"\naddress = \"pi.local\"\nengine = \"mysql\"\n[[host.database]]\nname = \"shop\"\nowner = \"app\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		inv, err := Parse("inv.toml", "/tmp", src)
		if err != nil {
			if !IsInputError(err) {
				t.Fatalf("not an input error: %T %v", err, err)
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
