package build

import (
	"runtime/debug"
	"testing"
)

func TestDescribeVersion(t *testing.T) {
	bi := func(main string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Version: main}}
		for i := 0; i+1 < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	rev := "3f9c2ab41d0712345678"
	for _, tc := range []struct {
		release string
		bi      *debug.BuildInfo
		want    string
	}{
		{"v0.15.0", bi("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "v0.15.0 (3f9c2ab41d07)"},
		{"", bi("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "(devel) (3f9c2ab41d07, modified)"},
		{"", bi("v0.15.0"), "v0.15.0"},
		{"", bi(""), "(devel)"},
	} {
		if got := Describe(tc.release, tc.bi); got != tc.want {
			t.Errorf("Describe(%q, %+v) = %q, want %q", tc.release, tc.bi.Settings, got, tc.want)
		}
	}
}
