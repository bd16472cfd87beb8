package action

import (
	"os"
	"path/filepath"

	"pidb/usage"
)

// outputFile refuses, before any work, a file to write that cannot be
// written (flag names it): a folder, or one whose folder is not there.
func outputFile(flag, path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usage.Errorf("%s %s: that is a folder: name the file to write (%s)", flag, path, filepath.Join(path, "..."))
	}
	return parentOf(flag, path)
}

// outputDir refuses, before any work, a folder to write files into that
// cannot be (flag names it): a file, or one whose folder is not there (the
// folder itself is made).
func outputDir(flag, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return usage.Errorf("%s %s: that is a file: name a folder to write the files into", flag, dir)
	case err == nil:
		return nil
	}
	return parentOf(flag, dir)
}

// parentOf refuses a path whose folder is not there, or is no folder.
func parentOf(flag, path string) error {
	dir := filepath.Dir(path)
	switch st, err := os.Stat(dir); {
	case err != nil:
		return usage.Errorf("%s %s: no folder %s to write it in", flag, path, dir)
	case !st.IsDir():
		return usage.Errorf("%s %s: %s is not a folder", flag, path, dir)
	}
	return nil
}
