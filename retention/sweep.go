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
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
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
// changed since the scan (pointed to again) is kept. Every removal and
// rename goes through one [os.Root] on root (memory_dir, see package
// memdir): a link planted anywhere in memory_dir, before the scan or
// since, is removed itself, never followed out of it.
func Execute(ctx context.Context, root string, plan *Result, p Policy, g Guard) *Report {
	if g == nil {
		g = NoGuard{}
	}
	rep := &Report{Plan: plan}
	top := memdir.At(root)
	r, err := top.OpenRoot()
	if err != nil {
		if len(plan.Actions) > 0 && !errors.Is(err, fs.ErrNotExist) {
			rep.Errors = append(rep.Errors, fmt.Errorf("retention: %w", err))
		}
		return rep
	}
	defer r.Close()
	for _, a := range plan.Actions {
		if ctx.Err() != nil {
			rep.Stopped = true
			break
		}
		var files int
		var freed int64
		name, err := top.Rel(a.Path)
		switch {
		case err != nil:
		case a.Reason == ReasonRun:
			if g.LiveRun(a.Path) {
				rep.Skipped++
				continue
			}
			files, freed, err = removeRun(ctx, r, name)
		case a.Reason == ReasonTrash:
			files, freed, err = removeTree(ctx, r, name)
		case a.Reason == ReasonRotate:
			freed, err = rotate(r, name, max(p.UsageKeep, 1), p.UsageMaxBytes)
		default:
			fi, serr := r.Lstat(name)
			if errors.Is(serr, fs.ErrNotExist) {
				continue // gone meanwhile (another sweep)
			}
			if serr != nil || !fi.ModTime().Equal(a.ModTime) || g.Protected(a.Path) {
				rep.Skipped++
				continue
			}
			if err = r.Remove(name); err == nil {
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

// removeRun moves a run directory (name, in r) into the trash with one
// rename, then empties the trash directory. Killed at any point, the run
// is whole under its name or in the trash, never half there.
func removeRun(ctx context.Context, r *os.Root, name string) (int, int64, error) {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	trash := filepath.Join(filepath.Dir(name), layout.TrashName(filepath.Base(name), hex.EncodeToString(rnd[:])))
	if err := r.Rename(name, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, 0, nil
		}
		return 0, 0, fmt.Errorf("retention: move run %s to the trash: %w", filepath.Base(name), err)
	}
	syncDir(r, filepath.Dir(name))
	return removeTree(ctx, r, trash)
}

// removeTree removes the directory name's files one by one (each whole or
// gone), then its directories, until ctx ends. A link is removed, never
// descended into, and so is name itself if it is not a directory.
func removeTree(ctx context.Context, r *os.Root, name string) (int, int64, error) {
	var files int
	var freed int64
	var dirs []string
	if fi, err := r.Lstat(name); err != nil || !fi.IsDir() {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, 0, nil
		}
		if err == nil {
			if err = r.Remove(name); err == nil {
				files, freed = 1, fi.Size()
			}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return files, freed, fmt.Errorf("retention: remove %s: %w", filepath.Base(name), err)
		}
		return files, freed, nil
	}
	err := fs.WalkDir(r.FS(), filepath.ToSlash(name), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		p = filepath.FromSlash(p)
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
		if err := r.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		files++
		freed += size
		return nil
	})
	if err != nil {
		return files, freed, fmt.Errorf("retention: remove %s: %w", filepath.Base(name), err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := r.Remove(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return files, freed, fmt.Errorf("retention: remove %s: %w", filepath.Base(dirs[i]), err)
		}
	}
	return files, freed, nil
}

// rotate renames usage.jsonl.{k} to .{k+1} for k = keep-1 … 1 and
// usage.jsonl (name, in r) to .1, each one rename (an appender holding the
// old file writes its line into the rotation). It returns the size of the
// rotation the renames overwrote.
func rotate(r *os.Root, name string, keep int, maxBytes int64) (int64, error) {
	fi, err := r.Stat(name)
	if err != nil || fi.Size() <= maxBytes {
		return 0, nil // rotated meanwhile (another process)
	}
	var dropped int64
	if fi, err := r.Stat(name + "." + strconv.Itoa(keep)); err == nil {
		dropped = fi.Size()
	}
	for k := keep - 1; k >= 1; k-- {
		from := name + "." + strconv.Itoa(k)
		if err := r.Rename(from, name+"."+strconv.Itoa(k+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("retention: rotate %s: %w", filepath.Base(from), err)
		}
	}
	if err := r.Rename(name, name+".1"); err != nil {
		return 0, fmt.Errorf("retention: rotate %s: %w", filepath.Base(name), err)
	}
	syncDir(r, filepath.Dir(name))
	return dropped, nil
}

// syncDir fsyncs the folder name in r, best effort: the renames in it are
// done, this makes them durable sooner.
func syncDir(r *os.Root, name string) {
	if d, err := r.Open(name); err == nil {
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

// lock takes memoryDir's sweep lock: a file created exclusively (through
// memory_dir's root: a link at its name is not followed), taken over when
// older than staleLock (its sweep was killed).
func lock(memoryDir string) (func(), error) {
	d := memdir.At(memoryDir)
	if _, err := d.Stat(""); errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil // nothing to sweep
	}
	for range 2 {
		f, err := d.OpenFile(layout.LockFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			_ = f.Close()
			return func() { _ = d.Remove(layout.LockFile) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("retention: lock: %w", err)
		}
		fi, serr := d.Lstat(layout.LockFile)
		if serr != nil || time.Since(fi.ModTime()) < staleLock {
			return nil, ErrBusy
		}
		_ = d.Remove(layout.LockFile)
	}
	return nil, ErrBusy
}
