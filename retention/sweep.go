package retention

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// ErrBusy is returned by [Sweep] when another sweep (in this process or
// another sharing memory_dir) holds the lock.
var ErrBusy = errors.New("retention: another sweep is running")

// staleLock is how old a sweep's lock must be to be taken over: a sweep
// killed before it released the lock.
const staleLock = 10 * time.Minute

// Report is what a sweep did.
type Report struct {
	Inventory *Inventory // what the scan found (before the removals)
	Plan      *Result
	Removed   int           // files removed
	Freed     int64         // bytes freed
	Done      int           // actions carried out
	Skipped   int           // actions dropped at the last check (protected or changed meanwhile)
	Errors    []error       // removals that failed (the sweep goes on)
	Stopped   bool          // the time bound ended the sweep before every action
	Duration  time.Duration // scan, plan and removals
}

// Execute carries out plan's actions in order until ctx ends. Before each
// removal g is asked again, and a single file whose modification time
// changed since the scan (pointed to again) is kept.
func Execute(ctx context.Context, root string, plan *Result, p Policy, g Guard) *Report {
	if g == nil {
		g = NoGuard{}
	}
	rep := &Report{Plan: plan}
	for _, a := range plan.Actions {
		if ctx.Err() != nil {
			rep.Stopped = true
			break
		}
		var err error
		var files int
		var freed int64
		switch a.Reason {
		case ReasonRun:
			if g.LiveRun(a.Path) {
				rep.Skipped++
				continue
			}
			files, freed, err = removeRun(ctx, root, a.Path)
		case ReasonTrash:
			files, freed, err = removeTree(ctx, a.Path)
		case ReasonRotate:
			freed, err = rotate(a.Path, max(p.UsageKeep, 1), p.UsageMaxBytes)
		default:
			fi, serr := os.Lstat(a.Path)
			if errors.Is(serr, fs.ErrNotExist) {
				continue // gone meanwhile (another sweep)
			}
			if serr != nil || !fi.ModTime().Equal(a.ModTime) || g.Protected(a.Path) {
				rep.Skipped++
				continue
			}
			if err = os.Remove(a.Path); err == nil {
				files, freed = 1, fi.Size()
			} else if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		}
		rep.Removed += files
		rep.Freed += freed
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				rep.Stopped = true
				break
			}
			rep.Errors = append(rep.Errors, err)
			continue
		}
		rep.Done++
	}
	return rep
}

// removeRun moves a run directory into the trash with one rename, then
// empties the trash directory. Killed at any point, the run is whole under
// its name or in the trash, never half there.
func removeRun(ctx context.Context, root, dir string) (int, int64, error) {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	trash := filepath.Join(filepath.Dir(dir), layout.TrashName(filepath.Base(dir), hex.EncodeToString(rnd[:])))
	if err := os.Rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, 0, nil
		}
		return 0, 0, fmt.Errorf("retention: move run %s to the trash: %w", filepath.Base(dir), err)
	}
	syncDir(filepath.Dir(dir))
	return removeTree(ctx, trash)
}

// removeTree removes dir's files one by one (each whole or gone), then its
// directories, until ctx ends.
func removeTree(ctx context.Context, dir string) (int, int64, error) {
	var files int
	var freed int64
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var size int64
		if fi, err := d.Info(); err == nil {
			size = fi.Size()
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		files++
		freed += size
		return nil
	})
	if err != nil {
		return files, freed, fmt.Errorf("retention: remove %s: %w", filepath.Base(dir), err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return files, freed, fmt.Errorf("retention: remove %s: %w", filepath.Base(dirs[i]), err)
		}
	}
	return files, freed, nil
}

// rotate renames usage.jsonl.{k} to .{k+1} for k = keep-1 … 1 and
// usage.jsonl to .1, each one rename (an appender holding the old file
// writes its line into the rotation). It returns the size of the rotation
// the renames overwrote.
func rotate(path string, keep int, maxBytes int64) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() <= maxBytes {
		return 0, nil // rotated meanwhile (another process)
	}
	var dropped int64
	if fi, err := os.Stat(path + "." + strconv.Itoa(keep)); err == nil {
		dropped = fi.Size()
	}
	for k := keep - 1; k >= 1; k-- {
		from := path + "." + strconv.Itoa(k)
		if err := os.Rename(from, path+"."+strconv.Itoa(k+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("retention: rotate %s: %w", filepath.Base(from), err)
		}
	}
	if err := os.Rename(path, path+".1"); err != nil {
		return 0, fmt.Errorf("retention: rotate %s: %w", filepath.Base(path), err)
	}
	syncDir(filepath.Dir(path))
	return dropped, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Options of [Sweep].
type Options struct {
	Policy Policy
	Guard  Guard         // nil: nothing is protected
	Budget time.Duration // bound on the whole sweep; 0: none
	DryRun bool          // plan only
	Now    func() time.Time
}

// Sweep scans memoryDir, plans under opts.Policy and (unless DryRun)
// carries the plan out, all within opts.Budget. One sweep runs at a time
// per memory_dir, across processes: a second one gets [ErrBusy] (a dry run
// takes no lock).
func Sweep(ctx context.Context, memoryDir string, opts Options) (*Report, error) {
	start := time.Now()
	if opts.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Budget)
		defer cancel()
	}
	if !opts.DryRun {
		unlock, err := lock(memoryDir)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	inv, err := Scan(ctx, memoryDir)
	if err != nil {
		return nil, fmt.Errorf("retention: scan %s: %w", memoryDir, err)
	}
	now := time.Now()
	if opts.Now != nil {
		now = opts.Now()
	}
	plan := Plan(inv, opts.Policy, opts.Guard, now)
	if opts.DryRun {
		return &Report{Inventory: inv, Plan: plan, Stopped: !inv.Complete, Duration: time.Since(start)}, nil
	}
	rep := Execute(ctx, memoryDir, plan, opts.Policy, opts.Guard)
	rep.Inventory = inv
	rep.Stopped = rep.Stopped || !inv.Complete
	rep.Duration = time.Since(start)
	return rep, nil
}

// lock takes memoryDir's sweep lock: a file created exclusively, taken
// over when older than staleLock (its sweep was killed).
func lock(memoryDir string) (func(), error) {
	if _, err := os.Stat(memoryDir); errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil // nothing to sweep
	}
	p := filepath.Join(memoryDir, layout.LockFile)
	for range 2 {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			_ = f.Close()
			return func() { _ = os.Remove(p) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("retention: lock: %w", err)
		}
		fi, serr := os.Stat(p)
		if serr != nil || time.Since(fi.ModTime()) < staleLock {
			return nil, ErrBusy
		}
		_ = os.Remove(p)
	}
	return nil, ErrBusy
}
