package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/pkg/sftp"
)

// ReadFile returns the contents of a file. On a view that runs as root it
// reads as the user who controls the file's folder (FolderUser), as Upload
// writes: a link that user planted cannot make root read, and pidb then
// write back where that user reads it, a file the user may not read.
func (c *Client) ReadFile(ctx context.Context, p string) ([]byte, error) {
	// in C's words: "No such file or directory" is read below, whatever
	// language the Pi's locale speaks
	cmd := "LC_ALL=C cat -- " + Quote(p)
	if c.asRoot() {
		user, err := FolderUser(ctx, c, path.Dir(p))
		if err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", c.cfg.Name, p, err)
		}
		cmd = AsUser(user, cmd)
	}
	res, err := c.Run(ctx, cmd)
	var ee *ExitError
	if errors.As(err, &ee) && bytes.Contains(ee.Stderr, []byte("No such file or directory")) {
		return nil, fmt.Errorf("%s: %s: %w", c.cfg.Name, p, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	return res.Stdout, nil
}

func (c *Client) sftp() (*sftp.Client, error) {
	c.conn.sftpMu.Lock()
	defer c.conn.sftpMu.Unlock()
	if c.conn.sftpCli == nil {
		s, err := sftp.NewClient(c.conn.ssh)
		if err != nil {
			return nil, fmt.Errorf("%s: start sftp: %w", c.cfg.Name, err)
		}
		c.conn.sftpCli = s
	}
	return c.conn.sftpCli, nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Upload writes data to p with mode, atomically. As a login user other than
// root it writes a temp file in p's folder over SFTP and renames it into
// place. As root (an AsRoot view, or a root login) it hands the data to a
// command that writes a temp file in p's folder and renames it into place,
// run as the user who controls the folder (FolderUser): root never writes
// where another user could have planted a link. Nothing is staged in /tmp.
// A replaced file keeps its mode (and, written as root, its owner); a new
// one gets the mode asked, and belongs to whoever wrote it. A failure
// names a full disk as such.
func (c *Client) Upload(ctx context.Context, p string, data []byte, mode fs.FileMode) error {
	if !path.IsAbs(p) {
		return fmt.Errorf("%s: upload: %q is not an absolute path", c.cfg.Name, p)
	}
	dir, base := path.Split(p)
	if !c.asRoot() {
		s, err := c.sftp()
		if err != nil {
			return err
		}
		tmp := path.Join(dir, "."+base+".pidb-"+randomSuffix())
		if err := writeSFTP(s, tmp, data, mode); err != nil {
			_ = s.Remove(tmp)
			return c.uploadError(ctx, p, err)
		}
		if err := keepOwnerAndMode(s, tmp, p, dir); err != nil {
			_ = s.Remove(tmp)
			return fmt.Errorf("%s: upload %s: %w", c.cfg.Name, p, err)
		}
		if err := s.PosixRename(tmp, p); err != nil {
			_ = s.Remove(tmp)
			return fmt.Errorf("%s: upload %s: %w", c.cfg.Name, p, err)
		}
		return nil
	}
	user, err := FolderUser(ctx, c, path.Clean(dir))
	if err != nil {
		return fmt.Errorf("%s: upload %s: %w", c.cfg.Name, p, err)
	}
	if _, err := c.RunInput(ctx, AsUser(user, uploadScript(p, mode, user == "root")), data); err != nil {
		return c.uploadError(ctx, p, err)
	}
	return nil
}

// uploadScript writes its standard input to p (Replace). A regular file
// at p gives the new one its mode, and as root its owner.
func uploadScript(p string, mode fs.FileMode, root bool) string {
	qp := Quote(p)
	keep := `chmod "$(stat -c %a -- ` + qp + `)" "$t"`
	if root {
		keep += ` && chown "$(stat -c %u:%g -- ` + qp + `)" "$t"`
	}
	return Replace(p, "if [ -f "+qp+" ] && [ ! -h "+qp+" ]; then "+keep+"; else chmod "+fmt.Sprintf("%04o", uint32(mode.Perm()))+` "$t"; fi && cat > "$t"`)
}

// Replace is a shell script that replaces the file p whole: fill writes
// the new contents to "$t", a temp file beside p that mktemp makes
// (O_EXCL: never one that was there), which a rename then puts in p's
// place (replacing a link at p, never writing through it); the temp file
// is gone either way. The script exits with the first failure's status.
func Replace(p, fill string) string {
	dir, base := path.Split(p)
	return "umask 077 && t=$(mktemp " + Quote(path.Join(dir, "."+base+".pidb-XXXXXX")) + ") || exit 1; " +
		fill + ` && mv -f -- "$t" ` + Quote(p) + `; rc=$?; rm -f -- "$t"; exit $rc`
}

// uploadError names a failed upload, and a full disk as such: the free
// space of the file's folder, read after the failure.
func (c *Client) uploadError(ctx context.Context, p string, err error) error {
	dir := path.Dir(p)
	var ee *ExitError
	if errors.As(err, &ee) && len(bytes.TrimSpace(ee.Stderr)) > 0 {
		// what the command said, not the command
		err = errors.New(string(bytes.TrimSpace(ee.Stderr)))
	}
	res, dfErr := c.Run(ctx, "df -Pk "+Quote(dir)+" | tail -n 1")
	if f := strings.Fields(string(res.Stdout)); dfErr == nil && len(f) >= 6 {
		if free, perr := strconv.ParseInt(f[3], 10, 64); perr == nil && free < 64 {
			return fmt.Errorf("%s: upload %s: the disk that holds %s (%s, mounted on %s) is full: %d KiB free (%w)", c.cfg.Name, p, dir, f[0], f[5], free, err)
		}
	}
	return fmt.Errorf("%s: upload %s: %w", c.cfg.Name, p, err)
}

// keepOwnerAndMode gives tmp, which will replace p, p's owner and mode, or
// for a new file the owner of its folder (the mode is the one asked).
// Changing the owner needs root; as anyone else it is the same owner.
func keepOwnerAndMode(s *sftp.Client, tmp, p, dir string) error {
	like, err := s.Stat(p)
	replacing := err == nil
	if replacing {
		if err := s.Chmod(tmp, like.Mode().Perm()); err != nil {
			return err
		}
	} else if like, err = s.Stat(dir); err != nil {
		return err
	}
	st, ok := like.Sys().(*sftp.FileStat)
	if !ok {
		return nil
	}
	if have, err := s.Stat(tmp); err == nil {
		if hs, ok := have.Sys().(*sftp.FileStat); ok && hs.UID == st.UID && hs.GID == st.GID {
			return nil
		}
	}
	if err := s.Chown(tmp, int(st.UID), int(st.GID)); err != nil && replacing {
		return err // a new file in someone else's folder stays the writer's
	}
	return nil
}

func writeSFTP(s *sftp.Client, p string, data []byte, mode fs.FileMode) error {
	f, err := s.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL)
	if err != nil {
		return err
	}
	if err := f.Chmod(mode.Perm()); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
