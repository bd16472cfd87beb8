package remote

import (
	"fmt"
	"testing"

	"pidb/internal/shtest"
)

// TestScriptsTakeValuesAsData: the scripts remote builds around a path
// and a user (Upload's as root, Replace, ReadFile's, FolderUser's, AsUser),
// run under sh with their commands stubbed and fed hostile values, run
// none as a command and pass each to its commands unchanged.
func TestScriptsTakeValuesAsData(t *testing.T) {
	sb := shtest.New(t)
	for _, v := range shtest.Hostile("/etc/postgresql/15/main/x") {
		for _, root := range []bool{false, true} {
			sb.Print("mktemp", "/tmp/t")
			r := sb.Run(uploadScript(v, 0o640, root), "data")
			r.Check(t, fmt.Sprintf("uploadScript(%q, root %v)", v, root), "", v)
		}
		for _, user := range []string{"postgres", v} {
			r := sb.Run(AsUser(user, Command("cat", "--", v)), "")
			r.Check(t, fmt.Sprintf("AsUser(%q)", user), "", v)
			if user != "root" && r.Calls[0].Name != "runuser" || r.Calls[0].Args[1] != user {
				t.Errorf("AsUser(%q): %v", user, r.Calls)
			}
		}
		parts := folderChain(v)
		r := sb.Run(folderUserCmd(parts), "")
		r.Check(t, "FolderUser's", "", parts...)
	}
}
