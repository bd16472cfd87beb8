package lab

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pidb/facts"
	"pidb/inventory"
)

// The expected values are the boards' own, written out by hand from the
// Raspberry Pi documentation's revision codes and what the boards print.
func TestDefaultFleetBoards(t *testing.T) {
	want := map[string]struct {
		model, revision string
		ram             uint64
		processors      int
		desktop         bool
		engine          string
	}{
		"pi4":  {"Raspberry Pi 4 Model B Rev 1.4", "c03114", 4294967296, 4, true, "postgres"},
		"pi3":  {"Raspberry Pi 3 Model B Rev 1.2", "a02082", 1073741824, 4, true, "mysql"},
		"zero": {"Raspberry Pi Zero W Rev 1.1", "9000c1", 536870912, 1, false, "postgres"},
	}
	fleet := DefaultFleet()
	if len(fleet) != len(want) {
		t.Fatalf("fleet has %d boards, want %d", len(fleet), len(want))
	}
	for _, b := range fleet {
		w, ok := want[b.Name]
		if !ok {
			t.Errorf("unexpected board %q", b.Name)
			continue
		}
		cpuinfo := b.CPUInfo()
		if got := strings.Count(cpuinfo, "processor\t: "); got != w.processors {
			t.Errorf("%s: %d processor entries, want %d", b.Name, got, w.processors)
		}
		if !strings.Contains(cpuinfo, "\nModel\t\t: "+w.model+"\n") || !strings.Contains(cpuinfo, "\nRevision\t: "+w.revision+"\n") {
			t.Errorf("%s: cpuinfo lacks the Model or Revision line:\n%s", b.Name, cpuinfo)
		}
		if b.RAMBytes != w.ram || b.Desktop != w.desktop || string(b.Engine) != w.engine {
			t.Errorf("%s: ram %d desktop %v engine %s", b.Name, b.RAMBytes, b.Desktop, b.Engine)
		}
		// MemTotal is the RAM less the GPU's share (64 MB by default) and the kernel's: 80-95% of it
		mem := b.MemInfo()
		var kb uint64
		for _, line := range strings.Split(mem, "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "MemTotal:" {
				kb = parseUint(t, f[1])
			}
		}
		if kb*1024 < w.ram*80/100 || kb*1024 > w.ram*95/100 {
			t.Errorf("%s: MemTotal %d kB is not 80-95%% of %d bytes", b.Name, kb, w.ram)
		}
	}
	if fleet[0].MemTotalKB != 3884376 {
		t.Errorf("pi4 MemTotal = %d kB, want 3884376 (about 3.7 GiB, as a 4 GB Pi 4 shows)", fleet[0].MemTotalKB)
	}
}

func parseUint(t *testing.T, s string) uint64 {
	t.Helper()
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}

// TestBoards checks every board against facts' own reading of its revision
// code (a separate decoder), and that no two hosts the lab can boot share
// an address or a serial.
func TestBoards(t *testing.T) {
	want := map[string]struct {
		typ  string
		ram  uint64
		page int
	}{
		"pi4": {"4B", 4 << 30, 4096}, "pi3": {"3B", 1 << 30, 4096}, "zero": {"Zero W", 512 << 20, 4096},
		"pi5": {"5", 8 << 30, 16384}, "pi5-4gb": {"5", 4 << 30, 4096}, "pi4-2gb": {"4B", 2 << 30, 4096},
		"pi3plus": {"3B+", 1 << 30, 4096}, "zero2": {"Zero 2 W", 512 << 20, 4096}, "cm4": {"CM4", 4 << 30, 4096},
	}
	octets, serials := map[int]string{}, map[string]string{}
	for _, kind := range Boards() {
		w, ok := want[kind.Name]
		if !ok {
			t.Errorf("unexpected board %q", kind.Name)
			continue
		}
		rb, ok := facts.DecodeRevision(kind.Revision)
		if !ok || rb.Type != w.typ || rb.RAMBytes != w.ram || kind.RAMBytes != w.ram || kind.PageSize != w.page {
			t.Errorf("%s: revision %s decodes to %+v (ok %v); board RAM %d, page %d", kind.Name, kind.Revision, rb, ok, kind.RAMBytes, kind.PageSize)
		}
		if f := float64(kind.MemTotalKB*1024) / float64(kind.RAMBytes); f < 0.8 || f > 0.99 {
			t.Errorf("%s: MemTotal is %.2f of the RAM", kind.Name, f)
		}
		if h := kind.Heat; h.MaxMHz == 0 || h.FanIdleC >= h.FanFull || h.CaseIdleC >= h.CaseFull || h.FanFull >= h.CaseFull {
			t.Errorf("%s: heat %+v", kind.Name, h)
		}
		hosts := []Board{kind}
		for n := 1; n <= MaxNumbered; n++ {
			b, ok := BoardNamed(kind.Name + "-" + strconv.Itoa(n))
			if !ok || b.Kind != kind.Name || b.Revision != kind.Revision {
				t.Fatalf("%s-%d: %+v %v", kind.Name, n, b, ok)
			}
			hosts = append(hosts, b)
		}
		for _, b := range hosts {
			if other, dup := octets[b.Octet]; dup || b.Octet < 2 || b.Octet > 254 {
				t.Errorf("%s: octet %d (also %s)", b.Name, b.Octet, other)
			}
			octets[b.Octet] = b.Name
			if other, dup := serials[b.Serial]; dup {
				t.Errorf("%s: serial %s also %s's", b.Name, b.Serial, other)
			}
			serials[b.Serial] = b.Name
			if len(vethName(b)) > 15 {
				t.Errorf("%s: interface name %q too long", b.Name, vethName(b))
			}
		}
	}
}

func TestLabInventoryLoads(t *testing.T) {
	src := Inventory(DefaultFleet(), "/lab/id_ed25519", "/lab/known_hosts")
	inv, err := inventory.Parse("lab.toml", "/lab", src)
	if err != nil {
		t.Fatalf("the lab's inventory does not load: %v\n%s", err, src)
	}
	want := map[string]string{"pi4": "10.213.41.40 postgres", "pi3": "10.213.41.30 mysql", "zero": "10.213.41.10 postgres"}
	if len(inv.Hosts) != 3 {
		t.Fatalf("hosts = %d", len(inv.Hosts))
	}
	for _, h := range inv.Hosts {
		if got := h.Address + " " + string(h.Engine); got != want[h.Name] {
			t.Errorf("%s: %s, want %s", h.Name, got, want[h.Name])
		}
		if h.User != "pi" || h.Preset != "balanced" || h.Storage != "" || h.IdentityFile != "/lab/id_ed25519" || h.KnownHosts != "/lab/known_hosts" {
			t.Errorf("%s: %+v", h.Name, h)
		}
		if len(h.AllowFrom) != 1 || h.AllowFrom[0].String() != "10.213.41.0/24" {
			t.Errorf("%s: allow_from %v, want the lab subnet", h.Name, h.AllowFrom)
		}
	}
}

func TestHostSource(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n")
	write("etc/apt/sources.list.d/other.sources", "Types: deb\nURIs: http://other.example/node\nSuites: nodistro\nComponents: main\n")
	write("etc/apt/sources.list.d/debian.sources", "Types: deb deb-src\n# a comment: with a colon\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\n"+
		"Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n")
	t.Setenv("PIDB_LAB_MIRROR", "")
	src, err := HostSource(root)
	if err != nil || src != (Source{Mirror: "http://mirror.example/debian", Suite: "bookworm", Debian: true}) {
		t.Errorf("deb822: %+v, %v", src, err)
	}

	write("etc/apt/sources.list", "# old style\ndeb [arch=amd64 signed-by=/k.gpg] http://list.example/debian bookworm main\n")
	src, err = HostSource(root)
	if err != nil || src.Mirror != "http://list.example/debian" {
		t.Errorf("one-line list: %+v, %v", src, err)
	}

	t.Setenv("PIDB_LAB_MIRROR", "http://override.example/debian")
	if src, _ := HostSource(root); src.Mirror != "http://override.example/debian" {
		t.Errorf("PIDB_LAB_MIRROR not used: %+v", src)
	}
	t.Setenv("PIDB_LAB_MIRROR", "")

	// an Ubuntu machine's archive has no Debian release to build from
	write("etc/os-release", "VERSION_CODENAME=noble\nID=ubuntu\n")
	write("etc/apt/sources.list", "deb http://ubuntu.example/ubuntu noble main\n")
	if src, err := HostSource(root); err != nil || src.Debian || src.Mirror != "http://ubuntu.example/ubuntu" {
		t.Errorf("ubuntu: %+v, %v; want its archive, not Debian's", src, err)
	}

	write("etc/os-release", "VERSION_CODENAME=trixie\n")
	if _, err := HostSource(root); err == nil || !strings.Contains(err.Error(), `no apt source for "trixie"`) {
		t.Errorf("no matching source: err = %v", err)
	}
}
