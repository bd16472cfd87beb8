package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Release is an operating system a lab host boots: a Debian release, as
// the Raspberry Pi OS of that release is built on, with its own base
// image (debootstrap of Suite, cached under the lab's folder).
type Release struct {
	Name  string // what lab up --release takes: "trixie"
	Suite string // the Debian suite debootstrap builds
	About string // for people: what a Pi runs that it stands for
	// Postgres is the PostgreSQL major its apt installs ("17"): the
	// paths and unit names of a host's cluster (/etc/postgresql/17/main,
	// postgresql@17-main)
	Postgres string
	// Unstable adds Debian unstable to the image's apt sources, below
	// the suite's systemd, which boots here (unstable's refuses this
	// kernel's cgroup v1), for the packages only unstable has: Oracle
	// MySQL's mysql-server
	Unstable bool
	// OSRelease is the os-release the image shows instead of Debian's
	// ("" keeps Debian's): the distribution pidb takes the host for
	OSRelease string
}

// ubuntuOSRelease is Ubuntu 26.04's os-release, as the ubuntu release
// shows it: pidb takes the host for Ubuntu, which ships Oracle MySQL
// where Debian ships MariaDB. Its PRETTY_NAME says what it is.
const ubuntuOSRelease = `PRETTY_NAME="Ubuntu 26.04 LTS (pidb lab: Debian 13 with Debian unstable's servers)"
NAME="Ubuntu"
VERSION_ID="26.04"
VERSION="26.04 LTS (Resolute Raccoon)"
VERSION_CODENAME=resolute
ID=ubuntu
ID_LIKE=debian
UBUNTU_CODENAME=resolute
`

// The releases the lab boots. Trixie (Debian 13) is what Raspberry Pi OS
// has been built on since late 2025, bookworm (Debian 12) what its Legacy
// images still are; ubuntu stands for Ubuntu for the Pi, with Oracle
// MySQL and PostgreSQL 18 from Debian unstable.
var releases = []Release{
	{Name: "bookworm", Suite: "bookworm", Postgres: "15", About: "Debian 12, as Raspberry Pi OS Legacy: PostgreSQL 15, MariaDB 10.11"},
	{Name: "trixie", Suite: "trixie", Postgres: "17", About: "Debian 13, as Raspberry Pi OS since late 2025: PostgreSQL 17, MariaDB 11.8"},
	{Name: "ubuntu", Suite: "trixie", Postgres: "18", Unstable: true, OSRelease: ubuntuOSRelease,
		About: "Ubuntu 26.04 for the Pi as pidb sees it, built of Debian 13 with Debian unstable's servers, Ubuntu's own archive being out of reach here: Oracle MySQL 9.7, PostgreSQL 18"},
}

// DefaultRelease is the release a host boots when Lab.Releases names
// none: what Raspberry Pi OS is built on today.
const DefaultRelease = "trixie"

// legacyRelease is the release of a host or a snapshot an older lab
// made, before it had releases: the only one it booted then.
const legacyRelease = "bookworm"

// Default is DefaultRelease's entry.
func Default() Release {
	r, _ := ReleaseNamed(DefaultRelease)
	return r
}

// Releases are the releases the lab boots, oldest first.
func Releases() []Release { return slices.Clone(releases) }

// ReleaseNamed is the release called name.
func ReleaseNamed(name string) (Release, bool) {
	i := slices.IndexFunc(releases, func(r Release) bool { return r.Name == name })
	if i < 0 {
		return Release{}, false
	}
	return releases[i], true
}

// ReleaseNames are the releases' names, for an error.
func ReleaseNames() []string {
	var out []string
	for _, r := range releases {
		out = append(out, r.Name)
	}
	return out
}

// releaseFor is the release a host this Up boots gets: its entry in
// Releases, else the "*" entry, else DefaultRelease.
func (l *Lab) releaseFor(name string) (Release, error) {
	want := l.Releases[name]
	if want == "" {
		want = l.Releases["*"]
	}
	if want == "" {
		want = DefaultRelease
	}
	r, ok := ReleaseNamed(want)
	if !ok {
		return Release{}, fmt.Errorf("%s: no lab release %q (the lab boots %s)", name, want, strings.Join(ReleaseNames(), ", "))
	}
	return r, nil
}

// releaseMark is the file in a host's folder naming the release its disk
// lies over, while the host is there.
func (l *Lab) releaseMark(name string) string { return filepath.Join(l.hostDir(name), "release") }

// Release is the release the host was booted with: bookworm for a host
// booted before the lab had releases, "" for a host that is not
// there.
func (l *Lab) Release(name string) string {
	if !fileExists(l.hostDir(name)) {
		return ""
	}
	data, err := os.ReadFile(l.releaseMark(name))
	if err != nil {
		return legacyRelease
	}
	return strings.TrimSpace(string(data))
}

// Images builds every release's image that is not built yet (or was
// built by an older recipe), as Up would at a host's first boot on it:
// for a run that boots hosts of every release, before it does.
func (l *Lab) Images(ctx context.Context) error {
	if err := checkHost(); err != nil {
		return err
	}
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	for _, r := range releases {
		if err := l.ensureBase(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
