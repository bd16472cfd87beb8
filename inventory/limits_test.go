package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidb/usage"
)

const oneHost = "[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\n"

// deepShapes are the ways a TOML file nests, each n levels deep as
// MaxDepth counts them. The TOML decoder copies the whole key path at
// every level, so its time and memory grow with the square of n (3,000
// nested inline tables: seconds and a gigabyte; long dotted keys and table
// headers alike); arrays alone cost less, and count all the same.
var deepShapes = map[string]func(n int) string{
	"inline tables": func(n int) string { return "x = " + strings.Repeat("{a = ", n) + "1" + strings.Repeat("}", n) + "\n" },
	"arrays":        func(n int) string { return "x = " + strings.Repeat("[", n) + "1" + strings.Repeat("]", n) + "\n" },
	"tables in arrays": func(n int) string {
		return "x = " + strings.Repeat("[{a = ", n/2) + "1" + strings.Repeat("}]", n/2) + "\n"
	},
	"dotted key":         func(n int) string { return strings.Repeat("a.", n) + "a = 1\n" },
	"dotted header":      func(n int) string { return "[" + strings.Repeat("a.", n-1) + "a]\n" },
	"dotted array table": func(n int) string { return "[[" + strings.Repeat("a.", n-2) + "a]]\n" },
	"dotted keys inside": func(n int) string {
		return "x = " + strings.Repeat("{a.b.c = ", n/3) + "1" + strings.Repeat("}", n/3) + "\n"
	},
	// a header's parts and its keys' add up: the keys start where the
	// header ended
	"a key under a header": func(n int) string {
		return "[" + strings.Repeat("a.", n/2-1) + "a]\n" + strings.Repeat("b.", n-n/2) + "b = 1\n"
	},
}

// TestDeepNestingRefused: an inventory nested deeper than MaxDepth, in any
// of the ways TOML nests, is refused before it is decoded: at once, with
// its file and the line where the depth is first exceeded.
func TestDeepNestingRefused(t *testing.T) {
	for name, shape := range deepShapes {
		t.Run(name, func(t *testing.T) {
			src := oneHost + "\n# deep\n" + shape(3000)
			start := time.Now()
			_, err := Parse("inv.toml", "/tmp", src)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v: the file was decoded", d)
			}
			if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), "inv.toml:6: ") || !strings.Contains(err.Error(), "nested more than 8 levels deep") {
				t.Errorf("error %v; want an input error at inv.toml:6, nested more than 8 levels deep", err)
			}
		})
	}
	// the line where it is first exceeded, not where the value starts
	// ([bench] is a level, x another, the 7th "[" the 9th)
	src := oneHost + "[bench]\nx = [\n" + strings.Repeat("[\n", 8) + strings.Repeat("]\n", 9)
	if _, err := Parse("inv.toml", "/tmp", src); err == nil || !strings.Contains(err.Error(), "inv.toml:12: ") {
		t.Errorf("9 levels over lines: %v; want the error at inv.toml:12, the 9th", err)
	}
	// Load names the file
	p := filepath.Join(t.TempDir(), "deep.toml")
	if err := os.WriteFile(p, []byte(deepShapes["inline tables"](3000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p+":1: ") {
		t.Errorf("Load: %v; want the error at %s:1", err, p)
	}
}

// TestNestingUpToTheCap: MaxDepth levels pass the cap (and reach the
// inventory's own checks), in each shape, and one level more is refused;
// brackets, dots and quotes inside strings and comments count for nothing.
func TestNestingUpToTheCap(t *testing.T) {
	for name, shape := range deepShapes {
		t.Run(name, func(t *testing.T) {
			at, over := MaxDepth, MaxDepth+1
			switch name {
			case "tables in arrays": // two levels at a time
				over = MaxDepth + 2
			case "dotted keys inside": // three levels at a time
				at, over = MaxDepth/3*3, (MaxDepth/3+1)*3
			}
			// at the top, before any table (a key under [[host]] is a
			// level deeper: host.x)
			_, err := Parse("inv.toml", "/tmp", shape(at)+oneHost)
			if err == nil || strings.Contains(err.Error(), "levels deep") || !strings.Contains(err.Error(), "unknown key") {
				t.Errorf("%d levels: %v; want the unknown key, not the nesting", at, err)
			}
			where := "inv.toml:1: "
			if name == "a key under a header" {
				where = "inv.toml:2: "
			}
			_, err = Parse("inv.toml", "/tmp", shape(over)+oneHost)
			if err == nil || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), "levels deep") {
				t.Errorf("%d levels: %v; want the nesting refused at %s", over, err, where)
			}
			// a key under [[host]] is a level deeper (a header starts anew)
			header := name == "dotted header" || name == "dotted array table" || name == "a key under a header"
			if _, err = Parse("inv.toml", "/tmp", oneHost+shape(at)); !header && at == MaxDepth && (err == nil || !strings.Contains(err.Error(), "levels deep")) {
				t.Errorf("%d levels under [[host]]: %v; want the nesting refused", at, err)
			}
		})
	}
	deep := strings.Repeat("[", 40) + strings.Repeat("{", 40) + strings.Repeat(".", 40)
	for name, src := range map[string]string{
		"basic string":               `x = "` + deep + `\"` + deep + `"` + "\n",
		"literal string":             `x = '` + deep + `\'` + "\n",
		"multi-line basic string":    `x = """` + "\n" + deep + `\"""` + deep + "\n" + deep + `"""""` + "\n",
		"multi-line literal string":  "x = '''\n" + deep + "\n" + deep + "'''''\n",
		"comment":                    "# " + deep + ` "'` + "\n",
		"comment after a value":      `x = 1 # ` + deep + "\n",
		"quoted key":                 `"` + deep + `" = 1` + "\n",
		"literal key":                `'` + deep + `' = 1` + "\n",
		"floats and dates":           "x = [" + strings.Repeat("1.5, 1979-05-27T07:32:00.999Z, ", 40) + "]\n",
		"empty strings":              `x = ["", '', """""", ''''''] # ` + deep + "\n",
		"line-ending backslash":      "x = \"\"\"a \\\n  " + deep + `"""` + "\n",
		"quotes in a multi-line one": `x = """""` + deep + `""'"""` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("inv.toml", "/tmp", oneHost+src+"y = 1\n")
			if err == nil || strings.Contains(err.Error(), "levels deep") || !strings.Contains(err.Error(), `unknown key "y"`) {
				t.Errorf("error %v; want the unknown key y, not the nesting", err)
			}
		})
	}
	if _, err := Load("testdata/full.toml"); err != nil {
		t.Errorf("full.toml: %v", err)
	}
}

// TestSizeCap: an inventory larger than MaxSize is refused, by Parse and by
// Load, which reads no more than the cap of it (a sparse file of a
// gigabyte is refused at once); one of exactly MaxSize loads.
func TestSizeCap(t *testing.T) {
	fill := func(n int) string { // oneHost, then comment lines up to n bytes
		line := "# " + strings.Repeat("x", 61) + "\n"
		s := oneHost + strings.Repeat(line, (n-len(oneHost))/len(line))
		return s + strings.Repeat("\n", n-len(s))
	}
	exact := fill(MaxSize)
	if len(exact) != MaxSize {
		t.Fatalf("fill: %d bytes", len(exact))
	}
	if _, err := Parse("inv.toml", "/tmp", exact); err != nil {
		t.Errorf("exactly %d bytes: %v", MaxSize, err)
	}
	_, err := Parse("inv.toml", "/tmp", exact+"\n")
	if err == nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), "inv.toml: ") || !strings.Contains(err.Error(), "larger than 256 KiB") {
		t.Errorf("one byte over: %v; want an input error naming inv.toml, larger than 256 KiB", err)
	}

	dir := t.TempDir()
	p := filepath.Join(dir, "big.toml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(oneHost); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: no disk, a gigabyte to read
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	_, err = Load(p)
	if err == nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), "larger than 256 KiB") {
		t.Errorf("Load of a gigabyte: %v; want an input error naming %s, larger than 256 KiB", err, p)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Load of a gigabyte took %v: it read the file", d)
	}
	ok := filepath.Join(dir, "ok.toml")
	if err := os.WriteFile(ok, []byte(exact), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ok); err != nil {
		t.Errorf("Load of exactly %d bytes: %v", MaxSize, err)
	}
}
