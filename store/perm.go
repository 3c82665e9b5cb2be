package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// writableByOthers are the mode bits that let group or other users write.
const writableByOthers fs.FileMode = 0o022

// CheckPermissions refuses a store file at path, or the folder holding it,
// that group or other users may write: they could rewrite or replace the
// verdict history, the free-allowance counts and the used payment ids. Its
// error (ErrInsecurePermissions) names the chmod that fixes it. Reading is
// not refused. A file not created yet is not an error (OpenBolt creates it
// with mode 0600). Windows has no such mode bits; there the folder's ACL is
// the operator's business.
func CheckPermissions(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	dir := filepath.Dir(path)
	if err := checkNotWritableByOthers(dir, "data folder", true); err != nil {
		return err
	}
	err := checkNotWritableByOthers(path, "store file", false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// checkNotWritableByOthers refuses a folder (dir) or regular file that group
// or others may write.
func checkNotWritableByOthers(path, what string, dir bool) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("checking %s: %w", what, err)
	}
	if dir != info.IsDir() || (!dir && !info.Mode().IsRegular()) {
		return fmt.Errorf("%s %s is not a %s", what, path, map[bool]string{true: "folder", false: "regular file"}[dir])
	}
	if perm := info.Mode().Perm(); perm&writableByOthers != 0 {
		return fmt.Errorf("%w: %s %s has mode %04o, so other users can change the verdict history and the used payment ids; fix it with: chmod go-w %s",
			ErrInsecurePermissions, what, path, perm, path)
	}
	return nil
}
