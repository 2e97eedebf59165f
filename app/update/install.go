package update

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/creativeprojects/go-selfupdate"
)

// executable is the file an update replaces, symlinks resolved (a link in
// PATH must keep pointing at the new binary).
func (u *Updater) executable() (string, error) {
	exe := u.cfg.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", err
		}
	}
	resolved, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", err
	}
	return resolved, nil
}

// install downloads, verifies and extracts rel, then puts it in place of exe.
// go-selfupdate swaps files with two renames (exe → .old, .new → exe), which
// leaves no binary at exe for a moment and does not sync the new file. On
// Unix the swap here is one rename of a synced file instead, so exe is always
// a whole binary, the old one or the new one. Windows cannot rename over a
// running executable: there the library's swap (with its rollback) is the way.
func (u *Updater) install(ctx context.Context, rel *selfupdate.Release, exe string) error {
	if runtime.GOOS == "windows" {
		return u.up.UpdateTo(ctx, rel, exe)
	}
	info, err := os.Stat(exe)
	if err != nil {
		return err
	}
	staging, err := os.MkdirTemp(filepath.Dir(exe), ".longhaul-update-")
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%s is not writable by this user (installed by a package manager? update it there): %w", filepath.Dir(exe), err)
	}
	if err != nil {
		return fmt.Errorf("stage the update next to the binary: %w", err)
	}
	defer os.RemoveAll(staging) //nolint:errcheck // best effort; it holds nothing once renamed
	// The library replaces a file of the same name (it finds the binary in the
	// archive by that name): an empty placeholder in the staging folder.
	staged := filepath.Join(staging, filepath.Base(exe))
	if err := os.WriteFile(staged, nil, 0o700); err != nil {
		return err
	}
	if err := u.up.UpdateTo(ctx, rel, staged); err != nil {
		return err
	}
	if err := syncFile(staged, info.Mode().Perm()); err != nil {
		return fmt.Errorf("sync the new binary: %w", err)
	}
	if err := os.Rename(staged, exe); err != nil {
		return fmt.Errorf("put the new binary in place: %w", err)
	}
	if dir, err := os.Open(filepath.Dir(exe)); err == nil {
		dir.Sync()  //nolint:errcheck // durability of the rename is best effort
		dir.Close() //nolint:errcheck // read-only
	}
	return nil
}

// syncFile gives path the mode and flushes it to disk.
func syncFile(path string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close() //nolint:errcheck // the chmod error is the one to report
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close() //nolint:errcheck // the sync error is the one to report
		return err
	}
	return f.Close()
}
