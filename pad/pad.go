package pad

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// File names inside a pad directory.
const (
	mdFile     = layout.PadMarkdownFile
	jsonFile   = layout.PadJSONFile
	lockName   = layout.PadLockFile
	noticeFile = layout.PadNoticeFile
)

// Pad is one scratchpad: a directory ([Open]) or keys on a Redis server
// ([Redis.Open]). It holds no state between calls beyond its options, so
// hand edits are seen on the next call, and one *Pad may be used from many
// goroutines; processes (and, on Redis, hosts) coordinate through the
// store's lock.
type Pad struct {
	store  store
	opts   Options
	schema *jsonschema.Schema
	file   string // mdFile or jsonFile
	ext    string // extension of history files
}

// Result describes what an update did.
type Result struct {
	// Changed is false for a no-op (an empty patch list, or patches that
	// leave the text as it was); nothing was written then.
	Changed bool
	// Diff is the unified diff of the change, "" when nothing changed.
	Diff string
	// Warnings are for the model: sections over their cap, checks out of
	// range, removes that matched nothing, a quarantined file.
	Warnings []string
	// Info says what a snapshot or restore did.
	Info []string
}

// Open returns the pad stored in dir, which is its own tree: nothing of it
// is read or written outside dir, through a link planted in it or
// otherwise ([OpenIn] with [memdir.At]). Nothing is created until the
// first write. If dir exists, temp files left by a crash are removed,
// which takes both locks and a directory scan: open a pad once (at start,
// or on a session's first call) and share the *Pad rather than opening per
// call.
func Open(dir string, opts Options) (*Pad, error) {
	if dir == "" {
		return OpenIn(memdir.Dir{}, opts)
	}
	return OpenIn(memdir.At(dir), opts)
}

// OpenIn returns the pad stored in the folder d, as [Open] does. Every
// file of it is reached through d, so a link planted on the way (at the
// pad's folder, a parent, .history, or a file's name) that leads out of
// d's tree (memory_dir) fails the call with an error wrapping
// [memdir.ErrOutside], and nothing is written there.
func OpenIn(d memdir.Dir, opts Options) (*Pad, error) {
	if d.Top() == "" {
		if _, err := opts.normalize(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: empty pad directory", ErrOptions)
	}
	return openStore(opts, func(file, ext string) store {
		return &fileStore{d: d, file: file, ext: ext}
	})
}

// openStore validates opts and builds a pad on the store that mk returns for
// the document's name and history extension, then removes crash leftovers.
func openStore(opts Options, mk func(file, ext string) store) (*Pad, error) {
	o, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	p := &Pad{opts: o, file: mdFile, ext: ".md"}
	if o.Format == FormatJSON {
		p.file, p.ext = jsonFile, ".json"
		if len(o.Schema) > 0 {
			if p.schema, err = compileSchema(o.Schema); err != nil {
				return nil, err
			}
		}
	}
	if err := p.checkTemplate(); err != nil {
		return nil, err
	}
	p.store = mk(p.file, p.ext)
	if err := p.store.cleanStale(); err != nil {
		return nil, err
	}
	return p, nil
}

// Dir returns the pad directory, or "" for a pad that is not a directory
// (Redis); see [Pad.Location].
func (p *Pad) Dir() string { return p.store.dir() }

// Location names where the pad lives: its directory, or for Redis the
// server's URL (password redacted) and the pad's key prefix. Two *Pad
// values with the same location are the same pad.
func (p *Pad) Location() string { return p.store.location() }

// Options returns the normalized options (defaults filled in).
func (p *Pad) Options() Options { return p.opts }

// Path returns the pad file's path (pad.md or pad.json); for Redis, the
// document's key, after the server's URL.
func (p *Pad) Path() string { return p.store.docPath() }

// state is one loaded version of the pad file.
type state struct {
	raw    []byte // file bytes as read; the empty form when the file is missing
	canon  []byte // raw in canonical form: what a no-op save would write
	exists bool
	doc    *document      // Markdown pads
	obj    map[string]any // structured pads
}

func (p *Pad) emptyState() *state {
	if p.opts.Template != "" {
		if st, err := p.parse([]byte(p.opts.Template)); err == nil { // checked by openStore
			st.exists = false
			return st
		}
	}
	st := &state{}
	if p.opts.Format == FormatJSON {
		st.obj = map[string]any{}
		st.raw, _ = encodeState(st.obj)
	} else {
		st.doc = newDocument(p.opts.Sections)
		st.raw = st.doc.format()
	}
	st.canon = st.raw
	return st
}

func (p *Pad) parse(raw []byte) (*state, error) {
	if p.opts.Format == FormatJSON {
		obj, err := decodeState(raw)
		if err != nil {
			return nil, &ParseError{File: jsonFile, Reason: err.Error()}
		}
		canon, err := encodeState(obj)
		if err != nil {
			return nil, err
		}
		return &state{raw: raw, canon: canon, exists: true, obj: obj}, nil
	}
	doc, err := parseMarkdown(raw, p.opts.Sections)
	if err != nil {
		return nil, err
	}
	return &state{raw: raw, canon: doc.format(), exists: true, doc: doc}, nil
}

// load reads and parses the pad file without locking: saves are atomic
// (renames, or one Redis command), so a reader always sees a whole version.
func (p *Pad) load() (*state, error) {
	raw, ok, err := p.store.readDoc()
	if err != nil {
		return nil, err
	}
	if !ok {
		return p.emptyState(), nil
	}
	return p.parse(raw)
}

// loadLocked loads the pad with the lock held, quarantining a file that
// does not parse. The note says what happened.
func (p *Pad) loadLocked(lk heldLock) (*state, string, error) {
	st, err := p.load()
	var perr *ParseError
	if errors.As(err, &perr) {
		return p.quarantine(lk, perr)
	}
	return st, "", err
}

// loadRepair loads the pad, taking the lock only when the file is broken.
func (p *Pad) loadRepair() (*state, error) {
	st, err := p.load()
	var perr *ParseError
	if !errors.As(err, &perr) {
		return st, err
	}
	lk, err := p.store.lock()
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	st, _, err = p.loadLocked(lk) // re-checks: another process may have repaired it
	return st, err
}

// quarantine moves a broken pad file aside, restores the newest version in
// history that parses, and leaves a notice for the next read. It never
// resets to empty: without a good version, what can be read is kept and
// the rest stays in the quarantined file. The caller holds the lock.
func (p *Pad) quarantine(lk heldLock, perr *ParseError) (*state, string, error) {
	now := p.opts.Now()
	broken, raw, err := p.store.quarantine(lk, now)
	if err != nil {
		return nil, "", err
	}
	versions, err := p.store.history(0)
	if err != nil {
		return nil, "", err
	}
	var note string
	var st *state
	for _, v := range versions {
		data, err := v.read()
		if err != nil {
			continue
		}
		if good, err := p.parse(data); err == nil {
			if err := p.store.commit(lk, nil, data, false, p.opts.History, now); err != nil {
				return nil, "", err
			}
			st = good
			note = fmt.Sprintf("%s did not parse (%s). It was moved to %s and the last good version (saved %s) was restored; re-apply any edits from the moved file.",
				p.file, perr.Reason+lineSuffix(perr), broken, v.Time.Format(time.RFC3339))
			break
		}
	}
	if st == nil {
		note = fmt.Sprintf("%s did not parse (%s) and history had no good version. It was moved to %s",
			p.file, perr.Reason+lineSuffix(perr), broken)
		if p.opts.Format == FormatMarkdown {
			doc, dropped := salvageMarkdown(raw, p.opts.Sections)
			data := doc.format()
			if err := p.store.commit(lk, nil, data, true, p.opts.History, now); err != nil {
				return nil, "", err
			}
			st = &state{raw: data, canon: data, exists: true, doc: doc}
			note += "; the text under known headings was kept"
			if len(dropped) > 0 {
				note += " (not kept: " + strings.Join(dropped, "; ") + ")"
			}
			note += "."
		} else {
			st = p.emptyState()
			note += "; the state starts empty until it is restored from that file."
		}
	}
	if err := p.store.addNotice(lk, note); err != nil {
		return nil, "", err
	}
	return st, note, nil
}

func lineSuffix(e *ParseError) string {
	if e.Line > 0 {
		return fmt.Sprintf(", line %d", e.Line)
	}
	return ""
}

// notices returns queued notes; consume removes them, so each is shown once.
func (p *Pad) notices(consume bool) ([]string, error) { return p.store.notices(consume) }

func splitNonEmpty(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// mutate runs one read-modify-write with the lock held throughout. fn gets
// the current state and returns the new file bytes (nil for no change).
func (p *Pad) mutate(fn func(st *state) ([]byte, []string, error)) (*Result, error) {
	return p.mutateWith(false, fn)
}

// mutateWith is mutate; with always, a new version is saved even when the
// document does not change (a clear of an empty pad is still a version).
func (p *Pad) mutateWith(always bool, fn func(st *state) ([]byte, []string, error)) (*Result, error) {
	lk, err := p.store.lock()
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	return p.mutateLocked(lk, always, fn)
}

// mutateLocked is [Pad.mutateWith] for a caller that holds the lock.
func (p *Pad) mutateLocked(lk heldLock, always bool, fn func(st *state) ([]byte, []string, error)) (*Result, error) {
	st, note, err := p.loadLocked(lk)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if note != "" {
		res.Warnings = append(res.Warnings, note)
	}
	next, warnings, err := fn(st)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warnings...)
	// Compare canonical forms: a patch that changes nothing must not
	// rewrite a hand-formatted file just to normalize its blank lines.
	if next == nil || (bytes.Equal(next, st.canon) && !always) {
		return res, nil
	}
	now := p.opts.Now()
	var prev []byte
	if st.exists {
		// Keep a hand edit made since the last save as its own version, so
		// history and diffs show it instead of folding it into this change.
		versions, err := p.store.history(1)
		if err != nil {
			return nil, err
		}
		same := false
		if len(versions) > 0 {
			if data, err := versions[0].read(); err == nil && bytes.Equal(data, st.raw) {
				same = true
			}
		}
		if !same {
			prev = st.raw
		}
	}
	if err := p.store.commit(lk, prev, next, true, p.opts.History, now); err != nil {
		return nil, err
	}
	res.Changed = true
	res.Diff = unifiedDiff("a/"+p.file, "b/"+p.file, st.raw, next)
	return res, nil
}

// Update applies patches to a Markdown pad, all or nothing. A rejected
// patch returns a *PatchError and leaves the pad untouched; an empty list
// is a no-op that writes nothing.
func (p *Pad) Update(patches []Patch) (*Result, error) {
	if p.opts.Format != FormatMarkdown {
		return nil, fmt.Errorf("%w: this pad is structured; send {state: {...}} to merge", ErrWrongFormat)
	}
	if err := validatePatches(patches, p.opts.Sections); err != nil {
		return nil, err
	}
	if len(patches) == 0 {
		return &Result{}, nil
	}
	return p.mutate(func(st *state) ([]byte, []string, error) {
		doc := st.doc.clone()
		warnings, err := applyPatches(doc, patches)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, doc.capWarnings()...)
		return doc.format(), warnings, nil
	})
}

// Merge deep-merges update into a structured pad's state: objects merge
// recursively, arrays and scalars replace, null removes a key, and the
// keys __proto__, constructor and prototype are dropped at every depth. The
// merged state must satisfy the schema, or nothing changes.
func (p *Pad) Merge(update []byte) (*Result, error) {
	if p.opts.Format != FormatJSON {
		return nil, fmt.Errorf("%w: this pad has sections; send patches", ErrWrongFormat)
	}
	obj, err := decodeState(update)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	var dropped []string
	clean, err := sanitize(obj, 1, p.opts.MaxDepth, "", &dropped)
	if err != nil {
		return nil, err
	}
	if len(obj) == 0 {
		return &Result{}, nil
	}
	return p.mutate(func(st *state) ([]byte, []string, error) {
		// Sanitize the merge too: a hand edit may have put a forbidden key
		// or deep nesting into the state on disk.
		m, err := sanitize(deepMerge(st.obj, clean.(map[string]any)), 1, p.opts.MaxDepth, "", &dropped)
		if err != nil {
			return nil, nil, err
		}
		merged := m.(map[string]any)
		if err := validateState(p.schema, merged); err != nil {
			return nil, nil, err
		}
		data, err := encodeState(merged)
		if err != nil {
			return nil, nil, err
		}
		var warnings []string
		if len(dropped) > 0 {
			warnings = append(warnings, fmt.Sprintf("dropped forbidden keys: %s", strings.Join(dropped, ", ")))
		}
		return data, warnings, nil
	})
}

// Append adds a note to the findings ledger. It does not touch the pad
// file and is safe under any number of concurrent appenders, in this
// process or others.
func (p *Pad) Append(note string, tags []string) (Entry, error) {
	return p.AppendBy("", note, tags)
}

// AppendBy is [Pad.Append] recording who appended the entry: the agent's
// name as the server knows it, so the agents sharing a run's pad can tell
// their findings apart.
func (p *Pad) AppendBy(by, note string, tags []string) (Entry, error) {
	note, tags, err := cleanNote(note, tags)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Time: p.opts.Now().UTC(), By: by, Note: note, Tags: tags}
	if err := p.store.appendEntry(e); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Compact rewrites the ledger without entries older than [Options.EntryTTL]
// and returns how many were dropped. Without a TTL it does nothing.
func (p *Pad) Compact() (int, error) {
	if p.opts.EntryTTL <= 0 {
		return 0, nil
	}
	return p.store.compactLedger(p.opts.Now().Add(-p.opts.EntryTTL))
}

// View is one read of the pad, ready to render.
type View struct {
	Format   string         // FormatMarkdown or FormatJSON
	Sections []SectionView  // Markdown pads
	State    map[string]any // structured pads
	Entries  []Entry        // ledger, oldest first, after TTL and tag filters
	Notes    []string       // what happened since the last read (quarantine)
	Warnings []string       // over-cap sections, unreadable ledger lines

	// Keyed values (see keys.go and render_keys.go).
	Keys        []KeyView // live keys shown, sorted by name
	KeysOnly    bool      // a read of some keys: no sections, state or ledger
	KeysLeftOut []string  // keys left out to fit max_tokens
	KeyStats    string    // one line: counts, namespaces, tags, TTLs, size
	Header      string    // an optional line put first
	MaxTokens   int       // the bound the rendering was fitted to, for the footer
}

// SectionView is one section with its text.
type SectionView struct {
	Section
	Body  string
	Chars int
}

// View reads the pad as the model sees it: it quarantines a broken file
// and restores the last good version (see the package doc), consumes
// pending notes so each is shown once, applies the entry TTL and keeps ledger entries carrying any
// of tags (all entries when tags is empty).
func (p *Pad) View(tags []string) (*View, error) {
	st, err := p.loadRepair()
	if err != nil {
		return nil, err
	}
	notes, err := p.notices(true)
	if err != nil {
		return nil, err
	}
	return p.view(st, notes, tags, true)
}

func (p *Pad) view(st *state, notes, tags []string, compact bool) (*View, error) {
	v := &View{Format: p.opts.Format, Notes: notes}
	if st.doc != nil {
		for i, s := range st.doc.sections {
			body := st.doc.bodies[i]
			v.Sections = append(v.Sections, SectionView{Section: s, Body: body, Chars: len([]rune(body))})
		}
		v.Warnings = append(v.Warnings, st.doc.capWarnings()...)
	} else {
		v.State = st.obj
		if err := validateState(p.schema, st.obj); err != nil {
			v.Warnings = append(v.Warnings, fmt.Sprintf("the state on disk does not satisfy the schema: %v", err))
		}
	}
	entries, bad, err := p.store.readLedger()
	if err != nil {
		return nil, err
	}
	if bad > 0 {
		v.Warnings = append(v.Warnings, fmt.Sprintf("%d unreadable ledger line(s) in %s were skipped", bad, ledgerFile))
	}
	expired := 0
	all := len(entries)
	entries, _ = resolveMarks(entries)
	var cutoff time.Time
	if p.opts.EntryTTL > 0 {
		cutoff = p.opts.Now().Add(-p.opts.EntryTTL)
	}
	for _, e := range entries {
		if !cutoff.IsZero() && e.Time.Before(cutoff) {
			expired++
			continue
		}
		if len(tags) > 0 && !slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(e.Tags, t) }) {
			continue
		}
		v.Entries = append(v.Entries, e)
	}
	// Compaction is lazy and amortized: only once expired entries are at
	// least half the file.
	if compact && expired > 0 && expired*2 >= all {
		_, _ = p.Compact()
	}
	return v, nil
}

// Read renders the pad for the model in the configured render mode,
// bounded by MaxTokens. It is what read_scratchpad returns.
func (p *Pad) Read(tags []string) (string, error) {
	return p.ReadWith(ReadOptions{Tags: tags, Renew: true})
}

// Show renders the pad without changing anything on disk: no quarantine,
// no notice consumed, no directory created. A broken file is reported and
// the last good version from history is shown instead.
func (p *Pad) Show() (string, error) {
	st, err := p.load()
	var notes []string
	var perr *ParseError
	if errors.As(err, &perr) {
		note := fmt.Sprintf("%s does not parse (%s). ", p.file, perr.Error())
		st = nil
		versions, _ := p.store.history(0)
		for _, v := range versions {
			if data, err := v.read(); err == nil {
				if good, err := p.parse(data); err == nil {
					st = good
					note += fmt.Sprintf("Showing the last good version (saved %s); the server will quarantine the file on its next access.", v.Time.Format(time.RFC3339))
					break
				}
			}
		}
		if st == nil {
			st = p.emptyState()
			note += "History has no good version; showing the empty structure."
		}
		notes = append(notes, note)
	} else if err != nil {
		return "", err
	}
	pending, _ := p.notices(false)
	v, err := p.view(st, append(notes, pending...), nil, false)
	if err != nil {
		return "", err
	}
	if err := p.addKeys(v, KeyFilter{}); err != nil {
		return "", err
	}
	return p.Render(v, p.opts.Render), nil
}

// Report is what [Pad.Validate] found.
type Report struct {
	File     string   // pad file path
	Exists   bool     // false on a fresh path
	Entries  int      // ledger entries that decode
	BadLines int      // ledger lines that do not
	Warnings []string // over-cap sections, schema violations
	// Broken names the parts of the pad that do not parse and so are
	// lost to readings (the keyed values' file): a pad with any does not
	// validate.
	Broken []string
}

// Validate parses the pad and the ledger and changes nothing. A pad file
// that does not parse is returned as a *ParseError (errors.Is ErrMalformed)
// together with the report.
func (p *Pad) Validate() (*Report, error) {
	r := &Report{File: p.Path()}
	entries, bad, err := p.store.readLedger()
	if err != nil {
		return r, err
	}
	visible, _ := resolveMarks(entries)
	r.Entries, r.BadLines = len(visible), bad
	_, r.Exists, err = p.store.readDoc()
	if err != nil {
		return r, err
	}
	st, err := p.load()
	if err != nil {
		return r, err
	}
	if st.doc != nil {
		r.Warnings = st.doc.capWarnings()
	} else if err := validateState(p.schema, st.obj); err != nil {
		r.Warnings = append(r.Warnings, err.Error())
	}
	if _, warn, err := p.loadKeys(); err != nil {
		return r, err
	} else if warn != "" {
		r.Broken = append(r.Broken, warn)
	}
	return r, nil
}

// History lists saved versions, newest first; version 1 is normally the
// current file.
func (p *Pad) History() ([]Version, error) {
	items, err := p.store.history(0)
	if err != nil {
		return nil, err
	}
	return versions(items), nil
}

// Diff returns the change that produced version n (1 = the latest change):
// the diff from version n+1 to version n.
func (p *Pad) Diff(n int) (string, error) {
	versions, err := p.store.history(0)
	if err != nil {
		return "", err
	}
	if n < 1 || n > len(versions) {
		return "", fmt.Errorf("%w: %d (history has %d)", ErrNoVersion, n, len(versions))
	}
	to, err := versions[n-1].read()
	if err != nil {
		return "", err
	}
	var from []byte
	fromName := "/dev/null"
	if n < len(versions) {
		if from, err = versions[n].read(); err != nil {
			return "", err
		}
		fromName = fmt.Sprintf("a/%s@%s", p.file, versions[n].Time.Format(time.RFC3339Nano))
	}
	return unifiedDiff(fromName, fmt.Sprintf("b/%s@%s", p.file, versions[n-1].Time.Format(time.RFC3339Nano)), from, to), nil
}

// Restore makes version n the current pad, saved as a new version so the
// restore itself can be undone.
func (p *Pad) Restore(n int) (*Result, error) {
	versions, err := p.store.history(0)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > len(versions) {
		return nil, fmt.Errorf("%w: %d (history has %d)", ErrNoVersion, n, len(versions))
	}
	data, err := versions[n-1].read()
	if err != nil {
		return nil, err
	}
	if _, err := p.parse(data); err != nil {
		return nil, fmt.Errorf("pad: version %d: %w", n, err)
	}
	res, err := p.mutate(func(*state) ([]byte, []string, error) { return data, nil, nil })
	if err != nil {
		return nil, err
	}
	// A version saved before a clear brings back what that clear hid.
	entries, _, err := p.store.readLedger()
	if err != nil {
		return res, err
	}
	_, clears := resolveMarks(entries)
	for i := len(clears) - 1; i >= 0 && clears[i].Time.After(versions[n-1].Time); i-- {
		if err := p.store.appendEntry(Entry{Time: p.opts.Now().UTC(), Mark: markUnclear}); err != nil {
			return res, err
		}
		res.Changed = true
		res.Warnings = append(res.Warnings, fmt.Sprintf("the ledger entries cleared at %s are back", clears[i].Time.Format(time.RFC3339)))
	}
	return res, nil
}

// Clear empties the pad, its sections (or state) and its ledger, and keeps
// it: the empty document is saved as a new version, and the ledger gets a
// clear marker that hides every entry before it (nothing is deleted).
// [Pad.Restore] of a version saved before the clear undoes it, ledger
// included. by names who cleared, as in [Pad.AppendBy].
func (p *Pad) Clear(by string) (*Result, error) {
	marked := false
	res, err := p.mutateWith(true, func(st *state) ([]byte, []string, error) {
		// The marker goes first, under the lock, so the empty version is
		// saved no earlier than it: a restore of that version keeps the
		// clear, a restore of any older one undoes it.
		if err := p.store.appendEntry(Entry{Time: p.opts.Now().UTC(), By: by, Mark: markClear}); err != nil {
			return nil, nil, err
		}
		marked = true
		return p.emptyState().raw, nil, nil
	})
	if err != nil && marked {
		// The document was not emptied: take the ledger's clear back.
		_ = p.store.appendEntry(Entry{Time: p.opts.Now().UTC(), By: by, Mark: markUnclear})
	}
	if err != nil {
		return nil, err
	}
	res.Changed = true
	// The keyed values go too, each delete a version of the keys'
	// history (pad restore N --keys brings them back).
	live, err := p.Keys(KeyFilter{}, false)
	if err != nil {
		return res, err
	}
	if len(live) > 0 {
		ops := make([]KeyOp, len(live))
		for i, k := range live {
			ops[i] = KeyOp{Op: "delete", Key: k.Name}
		}
		if _, err := p.UpdateKeys(by, ops); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Text returns the pad file as stored, or the empty structure on a fresh
// path; it is what an editor starts from.
func (p *Pad) Text() ([]byte, error) {
	raw, ok, err := p.store.readDoc()
	if err != nil {
		return nil, err
	}
	if !ok {
		return p.emptyState().raw, nil
	}
	return raw, nil
}

// Save replaces the pad with a whole new text (an edited copy). Text that
// does not parse, or a state that violates the schema, is refused with the
// reason and nothing changes.
func (p *Pad) Save(text []byte) (*Result, error) {
	st, err := p.parse(text)
	if err != nil {
		return nil, err
	}
	var data []byte
	var warnings []string
	if st.doc != nil {
		data = st.doc.format()
		warnings = st.doc.capWarnings()
	} else {
		var dropped []string
		clean, err := sanitize(st.obj, 1, p.opts.MaxDepth, "", &dropped)
		if err != nil {
			return nil, err
		}
		if err := validateState(p.schema, clean.(map[string]any)); err != nil {
			return nil, err
		}
		if data, err = encodeState(clean.(map[string]any)); err != nil {
			return nil, err
		}
	}
	res, err := p.mutate(func(*state) ([]byte, []string, error) { return data, nil, nil })
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warnings...)
	return res, nil
}
