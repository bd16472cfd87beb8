// Package build says which pidb this is: its release, or the module's
// version, and the commit it was built from.
package build

import "runtime/debug"

// Version is pidb's version: the release's, else the module's, with the
// commit it was built from (and "modified" when the checkout had changes)
// when the build recorded it.
func Version(release string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return orDevel(release)
	}
	return Describe(release, bi)
}

// Describe is the version of a build: "v1.2.3 (3f9c2ab41d07)", "(devel)
// (3f9c2ab41d07, modified)".
func Describe(release string, bi *debug.BuildInfo) string {
	v := orDevel(release)
	if release == "" && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if len(rev) >= 12 {
		rev = rev[:12]
		if modified == "true" {
			rev += ", modified"
		}
		v += " (" + rev + ")"
	}
	return v
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}
