package lab

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// baseRecipe names the base image's contents. Change it whenever buildBase
// changes, so cached images are rebuilt.
const baseRecipe = "pidb-lab-base v2: minbase + openssh-server,systemd,systemd-sysv,dbus,iproute2,sudo,procps,ca-certificates,less,e2fsprogs; pi user; apt timers masked"

// basePackages are what debootstrap adds to minbase: what Raspberry Pi OS
// Lite has of them. e2fsprogs (mkfs.ext4, fsck of its ext4 root) is
// required in bookworm and only important in trixie, so minbase leaves it
// out there.
var basePackages = "openssh-server,systemd,systemd-sysv,dbus,iproute2,sudo,procps,ca-certificates,less,e2fsprogs"

// Source is an apt source the base image is bootstrapped from.
type Source struct {
	Mirror string // the archive's URI
	Suite  string // the release codename
	// Debian is whether it is Debian's archive (this machine runs
	// Debian), which the lab's releases are built from; PIDB_LAB_MIRROR
	// names one
	Debian bool
}

// HostSource finds the Debian (or Ubuntu) archive this machine itself uses
// for its release, from /etc/os-release and the apt sources, so the lab
// works with whatever mirror the machine is set up for. PIDB_LAB_MIRROR
// overrides the mirror.
func HostSource(root string) (Source, error) {
	osr, err := os.ReadFile(filepath.Join(root, "etc/os-release"))
	if err != nil {
		return Source{}, fmt.Errorf("read os-release: %w", err)
	}
	suite := osReleaseField(string(osr), "VERSION_CODENAME")
	if suite == "" {
		return Source{}, fmt.Errorf("no VERSION_CODENAME in %s/etc/os-release", root)
	}
	if m := os.Getenv("PIDB_LAB_MIRROR"); m != "" {
		return Source{Mirror: m, Suite: suite, Debian: true}, nil
	}
	debian := osReleaseField(string(osr), "ID") == "debian"
	var files []string
	if f := filepath.Join(root, "etc/apt/sources.list"); fileExists(f) {
		files = append(files, f)
	}
	more, _ := filepath.Glob(filepath.Join(root, "etc/apt/sources.list.d/*"))
	files = append(files, more...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var m string
		switch {
		case strings.HasSuffix(f, ".sources"):
			m = mirrorFromDeb822(string(data), suite)
		case strings.HasSuffix(f, ".list"):
			m = mirrorFromList(string(data), suite)
		}
		if m != "" {
			return Source{Mirror: m, Suite: suite, Debian: debian}, nil
		}
	}
	return Source{}, fmt.Errorf("no apt source for %q found in %s/etc/apt (set PIDB_LAB_MIRROR to an archive URI)", suite, root)
}

func osReleaseField(s, key string) string {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// mirrorFromList reads one-line apt sources: "deb [opts] URI SUITE COMPONENTS".
func mirrorFromList(s, suite string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "deb" {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") {
			for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
				f = f[1:]
			}
			if len(f) == 0 {
				continue
			}
			f = f[1:]
		}
		if len(f) >= 2 && f[1] == suite {
			return f[0]
		}
	}
	return ""
}

// mirrorFromDeb822 reads deb822 apt sources, stanzas separated by blank lines.
func mirrorFromDeb822(s, suite string) string {
	for _, stanza := range strings.Split(s, "\n\n") {
		fields := map[string]string{}
		for _, line := range strings.Split(stanza, "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			if k, v, ok := strings.Cut(line, ":"); ok {
				fields[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
			}
		}
		if fields["enabled"] == "no" || !containsWord(fields["types"], "deb") || !containsWord(fields["suites"], suite) {
			continue
		}
		if uris := strings.Fields(fields["uris"]); len(uris) > 0 {
			return uris[0]
		}
	}
	return ""
}

func containsWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ensureBase builds the cached base image of rel unless one of the
// current recipe is there. It builds into a temporary folder and renames
// it into place, so an interrupted build leaves nothing that looks
// finished.
func (l *Lab) ensureBase(ctx context.Context, rel Release) error {
	dir := l.baseDir(rel.Name)
	recipe := baseRecipe + "; " + rel.Suite
	if rel.Unstable {
		recipe += "; unstable below the suite's systemd"
	}
	if rel.OSRelease != "" {
		recipe += "; os-release:\n" + rel.OSRelease
	}
	stamp := filepath.Join(dir, ".pidb-lab-base")
	if data, err := os.ReadFile(stamp); err == nil && string(data) == recipe {
		return nil
	}
	// a host's disk lies over its release's base image (mountDisk): it
	// stays as it is while a host has one
	for _, b := range l.hosts() {
		if mounted(l.rootfs(b.Name)) && l.lowerOf(b.Name) == dir {
			return fmt.Errorf("the lab's %s image is of an older pidb and %s's disk lies over it: take the lab down (pidb lab down) and up again", rel.Name, b.Name)
		}
	}
	src, err := HostSource("/")
	if err != nil {
		return err
	}
	if !src.Debian {
		return fmt.Errorf("the lab's releases are Debian's, and this machine's apt sources are not (%s): set PIDB_LAB_MIRROR to a Debian archive's URI to build the %s image from", src.Mirror, rel.Name)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	cache := filepath.Join(l.Dir, "cache", "debootstrap", rel.Suite)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	l.logf("building the %s image (debootstrap %s, a minute or two; cached for later runs)", rel.Name, rel.Suite)
	if _, err := run(ctx, "debootstrap", "--variant=minbase", "--include="+basePackages,
		"--cache-dir="+cache, rel.Suite, tmp, src.Mirror); err != nil {
		return fmt.Errorf("build the %s image: %w", rel.Name, err)
	}
	if err := customizeBase(ctx, tmp); err != nil {
		return fmt.Errorf("build the %s image: %w", rel.Name, err)
	}
	if err := releaseFiles(tmp, rel, src.Mirror); err != nil {
		return fmt.Errorf("build the %s image: %w", rel.Name, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".pidb-lab-base"), []byte(recipe), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	l.removeOldBase()
	return nil
}

// removeOldBase removes the one base image an older lab kept (its folder
// "base", bookworm's), once no host's disk lies over it.
func (l *Lab) removeOldBase() {
	old := filepath.Join(l.Dir, "base")
	if !fileExists(old) {
		return
	}
	for _, b := range l.hosts() {
		if mounted(l.rootfs(b.Name)) && !fileExists(l.snapshotMark(b.Name)) && !fileExists(l.releaseMark(b.Name)) {
			return
		}
	}
	_ = os.RemoveAll(old)
}

// releaseFiles writes what makes an image its release beyond its Debian
// suite: unstable's apt source with its pins, and another os-release.
func releaseFiles(root string, rel Release, mirror string) error {
	files := map[string]string{}
	if rel.Unstable {
		// unstable's Release file on a mirror's snapshot may be past its
		// Valid-Until; its systemd refuses this kernel's cgroup v1, so the
		// suite's stays (and what goes with it), above unstable's
		files["etc/apt/sources.list.d/unstable.list"] = "# pidb lab: Oracle MySQL's mysql-server is in Debian unstable only\ndeb [check-valid-until=no] " + mirror + " sid main\n"
		files["etc/apt/preferences.d/pidb-lab-unstable"] = "Package: *\nPin: release n=sid\nPin-Priority: 500\n\n" +
			"Package: systemd* libsystemd* udev libudev* libpam-systemd dbus* libdbus*\nPin: release n=" + rel.Suite + "\nPin-Priority: 1001\n"
	}
	if rel.OSRelease != "" {
		files["usr/lib/os-release"] = rel.OSRelease
	}
	for name, data := range files {
		if err := writeFile(filepath.Join(root, name), data, 0o644); err != nil {
			return err
		}
	}
	if rel.OSRelease != "" {
		// Debian's /etc/os-release is a link to it; keep it one
		link := filepath.Join(root, "etc/os-release")
		_ = os.Remove(link)
		if err := os.Symlink("../usr/lib/os-release", link); err != nil {
			return err
		}
	}
	return nil
}

// customizeBase makes the image look like Raspberry Pi OS where it matters:
// a "pi" user with passwordless sudo, key-only sshd, and no host keys (each
// host gets its own).
func customizeBase(ctx context.Context, root string) error {
	if _, err := run(ctx, "chroot", root, "useradd", "-m", "-s", "/bin/bash", "-G", "sudo,adm", "pi"); err != nil {
		return err
	}
	files := map[string]string{
		// the file Raspberry Pi OS ships for its first user
		"etc/sudoers.d/010_pi-nopasswd":       "pi ALL=(ALL) NOPASSWD: ALL\n",
		"etc/ssh/sshd_config.d/pidb-lab.conf": "# pidb lab: keys only\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUseDNS no\n",
	}
	for name, data := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "etc/sudoers.d/") {
			mode = 0o440
		}
		if err := writeFile(filepath.Join(root, name), data, mode); err != nil {
			return err
		}
	}
	// apt's daily timers would take the dpkg lock at random moments in tests
	for _, unit := range []string{"apt-daily.timer", "apt-daily-upgrade.timer"} {
		link := filepath.Join(root, "etc/systemd/system", unit)
		_ = os.Remove(link)
		if err := os.Symlink("/dev/null", link); err != nil {
			return err
		}
	}
	keys, _ := filepath.Glob(filepath.Join(root, "etc/ssh/ssh_host_*"))
	for _, k := range keys {
		if err := os.Remove(k); err != nil {
			return err
		}
	}
	return nil
}
