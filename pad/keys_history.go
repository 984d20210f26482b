package pad

import (
	"fmt"
	"io"
	"time"
)

// histPush asks a keys write to save the version to history too.
type histPush struct {
	keep int
	now  time.Time
}

// KeysHistory lists the saved versions of the keyed values, newest first
// ([Options.History] of them, like the document's). Every change is a
// version; a sliding renewal is not.
func (p *Pad) KeysHistory() ([]Version, error) {
	items, err := p.keyStore().keysHistory(0)
	if err != nil {
		return nil, err
	}
	return versions(items), nil
}

// keysVersion reads keys version n (1 = newest) as a key set.
func (p *Pad) keysVersion(items []histItem, n int) (*keySet, error) {
	if n < 1 || n > len(items) {
		return nil, fmt.Errorf("%w: %d (the keys' history has %d)", ErrNoVersion, n, len(items))
	}
	data, err := items[n-1].read()
	if err != nil {
		return nil, err
	}
	return decodeKeySet(data)
}

// KeysDiff returns the change that produced keys version n (1 = the latest
// change), one line per key as update results show them.
func (p *Pad) KeysDiff(n int) (string, error) {
	items, err := p.keyStore().keysHistory(0)
	if err != nil {
		return "", err
	}
	to, err := p.keysVersion(items, n)
	if err != nil {
		return "", err
	}
	var from []byte
	fromName := "/dev/null"
	if n < len(items) {
		prev, err := p.keysVersion(items, n+1)
		if err != nil {
			return "", err
		}
		from = keyLines(prev)
		fromName = "a/keys@" + items[n].Time.Format(time.RFC3339Nano)
	}
	return unifiedDiff(fromName, "b/keys@"+items[n-1].Time.Format(time.RFC3339Nano), from, keyLines(to)), nil
}

// RestoreKeys makes keys version n current, saved as a new version so the
// restore can be undone. Keys whose expiry time has passed stay expired.
func (p *Pad) RestoreKeys(n int) (*Result, error) {
	items, err := p.keyStore().keysHistory(0)
	if err != nil {
		return nil, err
	}
	old, err := p.keysVersion(items, n)
	if err != nil {
		return nil, err
	}
	lk, err := p.store.lock()
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	return p.mutateKeysLocked(lk, func(ks *keySet, now time.Time) ([]string, error) {
		ks.Keys = old.Keys
		ks.sweep(now)
		return nil, nil
	})
}

// KeysCommand runs `scratchpad-mcp pad history|diff|restore --keys`: the
// same commands on the keyed values' history, with the process exit code.
func KeysCommand(p *Pad, sub string, n int, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "scratchpad-mcp pad %s --keys: %v\n", sub, err)
		return 1
	}
	switch sub {
	case "history":
		vs, err := p.KeysHistory()
		if err != nil {
			return fail(err)
		}
		if len(vs) == 0 {
			fmt.Fprintln(stdout, "no keys history yet")
			return 0
		}
		fmt.Fprintf(stdout, "%3s  %-24s  %7s\n", "N", "saved (UTC)", "bytes")
		for _, v := range vs {
			fmt.Fprintf(stdout, "%3d  %-24s  %7d\n", v.N, v.Time.Format("2006-01-02T15:04:05.000Z"), v.Size)
		}
	case "diff":
		d, err := p.KeysDiff(n)
		if err != nil {
			return fail(err)
		}
		if d == "" {
			d = "(no difference)\n"
		}
		fmt.Fprint(stdout, d)
	case "restore":
		res, err := p.RestoreKeys(n)
		if err != nil {
			return fail(err)
		}
		writeResult(stdout, res)
	default:
		fmt.Fprintf(stderr, "scratchpad-mcp pad: --keys goes with history, diff or restore, not %q\n", sub)
		return 2
	}
	return 0
}
