package remote

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Root must never act on a path that another user can change: a link or a
// swapped file there would turn root's write, copy or chown into one on a
// file of that user's choosing (/etc/bash.bashrc in place of a backup of
// pg_hba.conf). So pidb acts on the files of a folder as the user who
// controls it: root where the folder and every folder above it belong to
// root and no one else may write them; the owner where some of them belong
// to one other user (postgres's /etc/postgresql/15/main: whatever that user
// planted, it can only make pidb write what it could write itself); and
// not at all where a folder is writable by a group or by everyone, or
// belongs to two users.

// FolderUser returns the user pidb acts as on the files in dir (an absolute
// path), read from the owners and modes of dir and the folders above it on
// the host; r runs as root. A folder that does not exist yet counts as
// made by the user who acts in its parent.
func FolderUser(ctx context.Context, r Runner, dir string) (string, error) {
	parts := folderChain(dir)
	if parts == nil {
		return "", fmt.Errorf("%s: %q is not an absolute path", r.Host(), dir)
	}
	res, err := r.Run(ctx, folderUserCmd(parts))
	if err != nil {
		return "", err
	}
	return folderUser(r.Host(), parts, string(res.Stdout))
}

// folderChain is dir and every folder above it, from / down.
func folderChain(dir string) []string {
	if !path.IsAbs(dir) {
		return nil
	}
	dir = path.Clean(dir)
	chain := []string{"/"}
	for i := 1; i < len(dir); i++ {
		if dir[i] == '/' {
			chain = append(chain, dir[:i])
		}
	}
	if dir != "/" {
		chain = append(chain, dir)
	}
	return chain
}

// folderUser decides from stat's lines ("OWNER MODE-IN-HEX" per folder of
// chain, "- -" for one that does not exist) who acts in the last folder.
func folderUser(host string, chain []string, out string) (string, error) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(chain) {
		return "", fmt.Errorf("%s: reading the owners of %s: %d answers for %d folders", host, chain[len(chain)-1], len(lines), len(chain))
	}
	user := ""
	for i, line := range lines {
		owner, hexMode, ok := strings.Cut(line, " ")
		if !ok {
			return "", fmt.Errorf("%s: reading the owner of %s: %q", host, chain[i], line)
		}
		if owner == "-" {
			break // not there yet: made below by whoever acts in its parent
		}
		mode, err := strconv.ParseUint(hexMode, 16, 32)
		if err != nil {
			return "", fmt.Errorf("%s: reading the mode of %s: %q", host, chain[i], line)
		}
		const typeMask, link, dirType = 0o170000, 0o120000, 0o040000
		switch mode & typeMask {
		case link:
			// a link's mode means nothing; its owner can point it anywhere
		case dirType:
			if mode&0o022 != 0 {
				return "", fmt.Errorf("%s: %s can be written by users other than its owner %s (mode %04o): pidb writes no file as root below it; make it writable by its owner only",
					host, chain[i], owner, mode&0o7777)
			}
		default:
			return "", fmt.Errorf("%s: %s is not a folder", host, chain[i])
		}
		switch {
		case owner == "UNKNOWN":
			return "", fmt.Errorf("%s: %s belongs to a user id with no name: pidb writes no file below it", host, chain[i])
		case owner == "root" || owner == user:
		case user == "":
			user = owner
		default:
			return "", fmt.Errorf("%s: %s belongs to %s, below a folder of %s's: pidb writes no file where two users could change the path",
				host, chain[i], owner, user)
		}
	}
	if user == "" {
		return "root", nil
	}
	return user, nil
}

// folderUserCmd prints the owner and mode of each folder, "- -" for one
// that is not there.
func folderUserCmd(parts []string) string {
	var cmd strings.Builder
	cmd.WriteString("for p in")
	for _, p := range parts {
		cmd.WriteString(" " + Quote(p))
	}
	// lstat: a link's own owner (who can point it elsewhere), not its target's
	cmd.WriteString("; do stat -c '%U %f' -- \"$p\" 2>/dev/null || echo '- -'; done")
	return cmd.String()
}

// AsUser is cmd run as user by root (runuser, from util-linux, which every
// Debian has), from /, so that no folder of root's is its working
// directory; cmd as it is for root.
func AsUser(user, cmd string) string {
	if user == "root" {
		return cmd
	}
	return "cd / && runuser -u " + Quote(user) + " -- sh -c " + Quote(cmd)
}
