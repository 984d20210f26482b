package pad

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Keyed values: named JSON values beside the sections (or the structured
// state) and the ledger, set and deleted by the operations below on
// update_scratchpad and read through read_scratchpad. They live in their
// own stored object (keys.json in the directory, <base>:keys on Redis),
// written under the pad's lock like the document, so a batch mixing
// section patches and key operations is one critical section.
//
// Names are namespaced with colons, "task1:probe:last_cursor"; a name
// ending in ":" in a filter selects a namespace. Expiry is by the pad's
// clock ([Options.Now]): each key's record holds its absolute expiry time,
// reads hide expired keys (lazily) and every write of the keys sweeps them
// out. Redis's native TTLs are not used: they run on the server's clock,
// which tests cannot move and which is not the clock the file backend
// and the ledger TTL use.

// Key operations, sent in update_scratchpad's patch list beside the
// section operations. Snapshot and restore name a snapshot in Content.
const (
	OpSet      = "set"
	OpDelete   = "delete"
	OpSnapshot = "snapshot"
	OpRestore  = "restore"
)

// KeyOps lists the key operations in the order the tool schema shows them.
var KeyOps = []string{OpSet, OpDelete, OpSnapshot, OpRestore}

// IsKeyOp reports whether op is a key (or snapshot) operation rather than
// a section patch.
func IsKeyOp(op string) bool { return slices.Contains(KeyOps, op) }

// Bounds on keyed values.
const (
	maxKeyName    = 128
	maxValueBytes = 16 << 10
	maxKeys       = 1000
	maxKeyTags    = 16 // tags of a key, and of a ledger entry
	// maxTTLSeconds bounds a key's ttl: 365 days, longer than any run
	// (0 is no expiry). A ttl past what a time.Duration holds (~292
	// years) used to wrap around to an expiry in 1734.
	maxTTLSeconds = 365 * 24 * 3600
)

// ttlDuration is a TTL in seconds as a time.Duration, saturating where a
// Duration ends instead of wrapping around: a record stored before ttl
// was bounded still expires in the future.
func ttlDuration(seconds float64) time.Duration {
	if d := seconds * float64(time.Second); d < float64(math.MaxInt64) {
		return time.Duration(d)
	}
	return math.MaxInt64
}

// KeyOp is one change to the keyed values. TTL is in seconds: nil means
// [Options.DefaultTTL], 0 no expiry. Sliding renews the TTL each time
// read_scratchpad shows the key.
type KeyOp struct {
	Op      string          `json:"op"`
	Key     string          `json:"key,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
	TTL     *float64        `json:"ttl,omitempty"`
	Sliding bool            `json:"sliding,omitempty"`
	Tags    []string        `json:"tags,omitempty"`
	// Content is the snapshot name for snapshot and restore.
	Content string `json:"content,omitempty"`
}

// keyRecord is one stored key.
type keyRecord struct {
	Value   json.RawMessage `json:"value"`
	Tags    []string        `json:"tags,omitempty"`
	TTL     float64         `json:"ttl,omitempty"` // seconds
	Sliding bool            `json:"sliding,omitempty"`
	Expires *time.Time      `json:"expires,omitempty"`
	Created time.Time       `json:"created"`
	Updated time.Time       `json:"updated"`
	By      string          `json:"by,omitempty"`
}

func (r *keyRecord) expired(now time.Time) bool {
	return r.Expires != nil && !now.Before(*r.Expires)
}

// keySet is the stored form of a pad's keys. Rev counts changes (not
// sliding renewals), so a subscriber is told of a change and not of a read.
type keySet struct {
	Rev  int64                 `json:"rev"`
	Keys map[string]*keyRecord `json:"keys"`
}

func (ks *keySet) encode() []byte {
	return marshalNoEscape(ks, "")
}

// marshalNoEscape is json.Marshal (indented when indent is not "")
// without HTML escaping: values keep their "<", ">" and "&" as the model
// wrote them. It ends with a newline.
func marshalNoEscape(v any, indent string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		data, _ := json.Marshal(map[string]string{"error": "render", "message": err.Error()})
		return append(data, '\n')
	}
	return b.Bytes()
}

func decodeKeySet(data []byte) (*keySet, error) {
	ks := &keySet{}
	if err := json.Unmarshal(data, ks); err != nil {
		return nil, &ParseError{File: keysFile, Reason: err.Error()}
	}
	if ks.Keys == nil {
		ks.Keys = map[string]*keyRecord{}
	}
	for name, r := range ks.Keys {
		if r == nil || checkKeyName(name) != "" {
			delete(ks.Keys, name)
		}
	}
	return ks, nil
}

func (ks *keySet) clone() *keySet {
	c := &keySet{Rev: ks.Rev, Keys: make(map[string]*keyRecord, len(ks.Keys))}
	for k, r := range ks.Keys {
		cp := *r
		cp.Tags = slices.Clone(r.Tags)
		c.Keys[k] = &cp
	}
	return c
}

// sweep removes expired keys and returns how many went.
func (ks *keySet) sweep(now time.Time) int {
	n := 0
	for k, r := range ks.Keys {
		if r.expired(now) {
			delete(ks.Keys, k)
			n++
		}
	}
	return n
}

// keysFile is the directory backend's file for keyed values.
const keysFile = layout.PadKeysFile

// keyStore is what a store offers for keyed values and snapshots. Both
// stores implement it; it is kept apart from [store] so the two grow
// independently.
type keyStore interface {
	// readKeys returns the stored keys; ok is false when there are none.
	readKeys() (data []byte, ok bool, err error)
	// writeKeys replaces the stored keys, atomically; the caller holds
	// the lock (on Redis the write is fenced by it). A change (hist not
	// nil) is also saved to the keys' history, pruned to hist.keep
	// versions, and subscribers hear of it; a sliding renewal (nil) is
	// neither.
	writeKeys(lk heldLock, data []byte, hist *histPush) error
	// keysHistory lists the keys' saved versions, newest first, at most
	// limit (0: all).
	keysHistory(limit int) ([]histItem, error)
	// readSnapshot returns the snapshot name; ok is false when there is
	// none.
	readSnapshot(name string) (data []byte, ok bool, err error)
	// writeSnapshot stores (or replaces) the snapshot name. The caller
	// holds the lock.
	writeSnapshot(lk heldLock, name string, data []byte) error
	// listSnapshots returns the snapshot names, sorted.
	listSnapshots() ([]string, error)
	// quarantineKeys moves unreadable keys aside and returns where to.
	// The caller holds the lock.
	quarantineKeys(lk heldLock, now time.Time) (string, error)
}

func (p *Pad) keyStore() keyStore { return p.store.(keyStore) }

// loadKeys reads the keys; a missing or unreadable object is empty (an
// unreadable one is reported in warn).
func (p *Pad) loadKeys() (*keySet, string, error) {
	data, ok, err := p.keyStore().readKeys()
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return &keySet{Keys: map[string]*keyRecord{}}, "", nil
	}
	ks, err := decodeKeySet(data)
	if err != nil {
		return &keySet{Keys: map[string]*keyRecord{}}, fmt.Sprintf("the keyed values do not parse (%v)", err), nil
	}
	return ks, "", nil
}

// checkKeyName returns why name cannot name a key, or "".
func checkKeyName(name string) string {
	switch {
	case name == "":
		return "a key needs a name"
	case len(name) > maxKeyName:
		return fmt.Sprintf("key names are at most %d bytes", maxKeyName)
	case !utf8.ValidString(name):
		return "key names must be UTF-8"
	case strings.HasPrefix(name, ":") || strings.HasSuffix(name, ":") || strings.Contains(name, "::"):
		return "namespaces are separated by single colons: \"ns:sub:key\""
	}
	for _, c := range name {
		if unicode.IsSpace(c) || unicode.IsControl(c) {
			return "key names have no spaces or control characters"
		}
	}
	return ""
}

// validateKeyOps checks key operations before anything is applied. index
// maps a key op to its position in the whole patch list, for errors.
func validateKeyOps(ops []KeyOp, index func(int) int) error {
	for i, op := range ops {
		fail := func(format string, args ...any) error {
			return &PatchError{Index: index(i), Patch: Patch{Op: op.Op, Content: op.Key}, Err: fmt.Errorf("%w: %s", ErrBadPatch, fmt.Sprintf(format, args...))}
		}
		switch op.Op {
		case OpSet, OpDelete:
			if msg := checkKeyName(op.Key); msg != "" {
				return fail("%s: %s", msg, quoteArg(op.Key))
			}
		case OpSnapshot, OpRestore:
			if len(ops) != 1 || index(0) != 0 {
				return fail("%s must be the only patch of its call", op.Op)
			}
			if msg := checkSnapshotName(op.Content); msg != "" {
				return fail("%s: %s", op.Op, msg)
			}
			continue
		default:
			return &PatchError{Index: index(i), Patch: Patch{Op: op.Op}, Err: fmt.Errorf("%w %s (ops: %s)", ErrUnknownOp, quoteArg(op.Op), strings.Join(allOps(), ", "))}
		}
		if op.Op == OpDelete {
			continue
		}
		v := bytes.TrimSpace(op.Value)
		if len(v) == 0 {
			return fail("set %q needs a value (any JSON; null is a value, delete removes the key)", op.Key)
		}
		if !json.Valid(v) {
			return fail("the value of %q is not JSON", op.Key)
		}
		if len(v) > maxValueBytes {
			return fail("the value of %q is %d bytes; at most %d fit a key (put big results in an artifact)", op.Key, len(v), maxValueBytes)
		}
		if op.TTL != nil && (*op.TTL < 0 || math.IsNaN(*op.TTL) || math.IsInf(*op.TTL, 0)) {
			return fail("ttl is seconds, 0 or more (0: no expiry)")
		}
		if op.TTL != nil && *op.TTL > maxTTLSeconds {
			return fail("ttl is at most %d seconds (365 days); 0 is no expiry", maxTTLSeconds)
		}
		if op.Sliding && op.TTL != nil && *op.TTL == 0 {
			return fail("sliding needs a ttl")
		}
		if len(op.Tags) > maxKeyTags {
			return fail("at most %d tags per key", maxKeyTags)
		}
		for _, t := range op.Tags {
			if strings.TrimSpace(t) == "" || strings.ContainsAny(t, ",\n") {
				return fail("tags are non-empty words without commas or newlines")
			}
			if utf8.RuneCountInString(t) > maxTagChars {
				return fail("tags are at most %d characters", maxTagChars)
			}
		}
	}
	return nil
}

// applyKeyOps applies validated set and delete operations to ks.
func (p *Pad) applyKeyOps(ks *keySet, ops []KeyOp, by string, now time.Time) ([]string, error) {
	var warnings []string
	for _, op := range ops {
		switch op.Op {
		case OpDelete:
			if r, ok := ks.Keys[op.Key]; !ok || r.expired(now) {
				warnings = append(warnings, fmt.Sprintf("delete: no key %q; nothing deleted", op.Key))
			}
			delete(ks.Keys, op.Key)
		case OpSet:
			var value json.RawMessage
			var buf bytes.Buffer
			if err := json.Compact(&buf, bytes.TrimSpace(op.Value)); err != nil {
				return nil, err
			}
			value = buf.Bytes()
			r := &keyRecord{Value: value, Sliding: op.Sliding, Created: now, Updated: now, By: by}
			if old, ok := ks.Keys[op.Key]; ok && !old.expired(now) {
				r.Created = old.Created
			}
			for _, t := range op.Tags {
				t = strings.TrimSpace(t)
				if !slices.Contains(r.Tags, t) {
					r.Tags = append(r.Tags, t)
				}
			}
			ttl := p.opts.DefaultTTL.Seconds()
			if op.TTL != nil {
				ttl = *op.TTL
			}
			if ttl > 0 {
				r.TTL = ttl
				exp := now.Add(ttlDuration(ttl)).UTC()
				r.Expires = &exp
			} else {
				r.Sliding = false
			}
			ks.Keys[op.Key] = r
		}
	}
	if len(ks.Keys) > maxKeys {
		return nil, fmt.Errorf("%w: the pad would hold %d keys; at most %d (delete some, or keep lists in one key)", ErrBadPatch, len(ks.Keys), maxKeys)
	}
	return warnings, nil
}

// keyLines is the text of the keys a diff compares: one line per key,
// name, value, tags and TTL; expiry instants are left out so a diff shows
// what the model changed.
func keyLines(ks *keySet) []byte {
	var b strings.Builder
	for _, name := range sortedNames(ks.Keys) {
		r := ks.Keys[name]
		fmt.Fprintf(&b, "%s = %s%s\n", name, r.Value, keyAttrs(r))
	}
	return []byte(b.String())
}

func keyAttrs(r *keyRecord) string {
	var parts []string
	if len(r.Tags) > 0 {
		parts = append(parts, "tags "+strings.Join(r.Tags, ","))
	}
	if r.TTL > 0 {
		s := "ttl " + formatSeconds(r.TTL)
		if r.Sliding {
			s += " sliding"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	return "  (" + strings.Join(parts, "; ") + ")"
}

func formatSeconds(s float64) string {
	return strconv.FormatFloat(s, 'f', -1, 64) + "s"
}

func sortedNames(m map[string]*keyRecord) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	// Namespace by namespace: "task1:x" before "task10".
	sort.Slice(names, func(i, j int) bool {
		return strings.ReplaceAll(names[i], ":", "\x00") < strings.ReplaceAll(names[j], ":", "\x00")
	})
	return names
}

// UpdateKeys applies key operations (set, delete, snapshot, restore) for
// the agent by, all or nothing. See [Pad.Apply].
func (p *Pad) UpdateKeys(by string, ops []KeyOp) (*Result, error) {
	return p.Apply(by, nil, ops)
}

// Apply applies section patches and key operations together: everything
// is validated first, then applied under one hold of the pad's lock, so a
// rejected patch or key operation changes nothing. Snapshot and restore
// must come alone. by names the agent, recorded on keys it sets.
//
// The document and the keys are two stored objects, written one after
// the other (the document first) under the one lock: a crash between the
// two writes can leave the sections written and the keys not.
func (p *Pad) Apply(by string, patches []Patch, ops []KeyOp) (*Result, error) {
	return p.ApplyOnce(by, "", patches, ops)
}

// ApplyOnce is [Pad.Apply] for a write that may be retried: on Redis,
// where a write that timed out may still land, key (the call's identity:
// its author and arguments) is recorded with the commit, and a second
// ApplyOnce with the same key within [AppendDedupeWindow] is not applied
// again ([ErrAlreadyApplied]). An empty key, or the file backend, is
// Apply.
func (p *Pad) ApplyOnce(by, key string, patches []Patch, ops []KeyOp) (*Result, error) {
	if len(patches) > 0 {
		if p.opts.Format != FormatMarkdown {
			return nil, fmt.Errorf("%w: this pad is structured; send {state: {...}} to merge", ErrWrongFormat)
		}
		if err := validatePatches(patches, p.opts.Sections); err != nil {
			return nil, err
		}
	}
	if err := validateKeyOps(ops, func(i int) int { return len(patches) + i }); err != nil {
		return nil, err
	}
	if len(ops) == 1 {
		switch ops[0].Op {
		case OpSnapshot:
			return p.Snapshot(by, ops[0].Content)
		case OpRestore:
			return p.RestoreSnapshot(by, ops[0].Content)
		}
	}
	if len(patches) == 0 && len(ops) == 0 {
		return &Result{}, nil
	}
	lk, err := p.store.lock()
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	if ol, ok := lk.(onceLock); ok && key != "" && len(patches) > 0 {
		// Under the lock: a write of this key that was in flight has
		// landed or never will (its lease is over).
		applied, err := ol.appliedOnce(key)
		if err != nil {
			return nil, err
		}
		if applied {
			return nil, fmt.Errorf("%w: you sent this identical update within the last %s and it was applied (a retry of a write whose answer was lost is not applied again); read the pad to see it", ErrAlreadyApplied, AppendDedupeWindow)
		}
		ol.markOnce(key)
	}
	// The key operations are computed first: one refused now (too many
	// keys) leaves the document untouched too. With no key operations
	// this still sweeps expired keys: every write does.
	kc, err := p.prepareKeys(lk, func(ks *keySet, now time.Time) ([]string, error) {
		return p.applyKeyOps(ks, ops, by, now)
	})
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if len(patches) > 0 {
		if res, err = p.mutateLocked(lk, false, func(st *state) ([]byte, []string, error) {
			doc := st.doc.clone()
			warnings, err := applyPatches(doc, patches)
			if err != nil {
				return nil, nil, err
			}
			warnings = append(warnings, doc.capWarnings()...)
			return doc.format(), warnings, nil
		}); err != nil {
			return nil, err
		}
	}
	kres, err := kc.commit()
	if err != nil {
		return nil, err
	}
	res.Changed = res.Changed || kres.Changed
	res.Diff += kres.Diff
	res.Warnings = append(res.Warnings, kres.Warnings...)
	return res, nil
}

// mutateKeysLocked loads the keys, sweeps expired ones, lets fn change
// them and writes them back if anything changed. The caller holds lk.
func (p *Pad) mutateKeysLocked(lk heldLock, fn func(ks *keySet, now time.Time) ([]string, error)) (*Result, error) {
	kc, err := p.prepareKeys(lk, fn)
	if err != nil {
		return nil, err
	}
	return kc.commit()
}

// keyChange is a computed change of the keys, not yet written.
type keyChange struct {
	p    *Pad
	lk   heldLock
	res  *Result
	next []byte // nil: nothing to write
}

// prepareKeys is the first half of mutateKeysLocked: everything that can
// refuse the change, before anything is written (but a quarantine of
// unreadable keys), so a mixed batch can check its key operations before
// it writes the document.
func (p *Pad) prepareKeys(lk heldLock, fn func(ks *keySet, now time.Time) ([]string, error)) (*keyChange, error) {
	ks, warn, err := p.loadKeys()
	if err != nil {
		return nil, err
	}
	kc := &keyChange{p: p, lk: lk, res: &Result{}}
	now := p.opts.Now()
	if warn != "" {
		// Move the unreadable keys aside before anything overwrites them.
		name, err := p.keyStore().quarantineKeys(lk, now)
		if err != nil {
			return nil, err
		}
		kc.res.Warnings = append(kc.res.Warnings, fmt.Sprintf("%s; it was moved to %s and the keys start empty", warn, name))
	}
	before := keyLines(ks)
	next := ks.clone()
	swept := next.sweep(now)
	w, err := fn(next, now)
	if err != nil {
		return nil, err
	}
	kc.res.Warnings = append(kc.res.Warnings, w...)
	after := keyLines(next)
	if bytes.Equal(before, after) && swept == 0 {
		return kc, nil
	}
	next.Rev = ks.Rev + 1
	kc.next = next.encode()
	if !bytes.Equal(before, after) {
		kc.res.Changed = true
		kc.res.Diff = unifiedDiff("a/keys", "b/keys", before, after)
	}
	return kc, nil
}

// commit writes a prepared change.
func (kc *keyChange) commit() (*Result, error) {
	if kc.next != nil {
		if err := kc.p.keyStore().writeKeys(kc.lk, kc.next, &histPush{keep: kc.p.opts.History, now: kc.p.opts.Now()}); err != nil {
			return nil, err
		}
	}
	return kc.res, nil
}

// KeyView is one live key as a read returns it.
type KeyView struct {
	Name    string
	Value   json.RawMessage
	Tags    []string
	TTL     time.Duration // 0: no expiry
	Sliding bool
	Expires time.Time // zero: no expiry
	Created time.Time
	Updated time.Time
	By      string
}

// Namespace is the key's namespace: everything before its last colon, ""
// for a top-level key.
func (k KeyView) Namespace() string {
	if i := strings.LastIndexByte(k.Name, ':'); i >= 0 {
		return k.Name[:i]
	}
	return ""
}

// KeyFilter selects keys. Names holds key names and namespaces (a name
// ending in ":" selects every key under it, at any depth); Tags keeps keys
// carrying any of them. Empty fields select everything.
type KeyFilter struct {
	Names []string
	Tags  []string
}

func (f KeyFilter) match(name string, r *keyRecord) bool {
	if len(f.Names) > 0 && !slices.ContainsFunc(f.Names, func(n string) bool {
		n = strings.TrimSuffix(n, "*")
		if strings.HasSuffix(n, ":") {
			return strings.HasPrefix(name, n)
		}
		return n == name
	}) {
		return false
	}
	if len(f.Tags) > 0 && !slices.ContainsFunc(f.Tags, func(t string) bool { return slices.Contains(r.Tags, t) }) {
		return false
	}
	return true
}

// Keys returns the live keys f selects, sorted by name; expired keys are
// never returned. With renew, the sliding keys returned get their TTL
// renewed from now (a write under the pad's lock that subscribers are not
// told of); read_scratchpad renews, the resource and the CLI do not.
func (p *Pad) Keys(f KeyFilter, renew bool) ([]KeyView, error) {
	keys, _, err := p.liveKeys(f, renew)
	return keys, err
}

// liveKeys is [Pad.Keys], also returning a warning when the stored keys
// do not parse.
func (p *Pad) liveKeys(f KeyFilter, renew bool) ([]KeyView, string, error) {
	ks, warn, err := p.loadKeys()
	if err != nil {
		return nil, "", err
	}
	now := p.opts.Now()
	var out []KeyView
	var sliding []string
	for _, name := range sortedNames(ks.Keys) {
		r := ks.Keys[name]
		if r.expired(now) || !f.match(name, r) {
			continue
		}
		if r.Sliding && r.TTL > 0 {
			sliding = append(sliding, name)
			exp := now.Add(ttlDuration(r.TTL)).UTC()
			if renew {
				r.Expires = &exp
			}
		}
		out = append(out, keyView(name, r))
	}
	if renew && len(sliding) > 0 {
		if err := p.renew(sliding); err != nil {
			return nil, "", err
		}
	}
	return out, warn, nil
}

func keyView(name string, r *keyRecord) KeyView {
	v := KeyView{Name: name, Value: r.Value, Tags: r.Tags, Sliding: r.Sliding, Created: r.Created, Updated: r.Updated, By: r.By}
	if r.Expires != nil {
		v.TTL = ttlDuration(r.TTL)
		v.Expires = *r.Expires
	}
	return v
}

// renew moves the expiry of the named sliding keys to now + their TTL,
// re-reading under the lock so no concurrent change is lost. A key that
// expired or changed meanwhile keeps what it has.
func (p *Pad) renew(names []string) error {
	lk, err := p.store.lock()
	if err != nil {
		return err
	}
	defer lk.unlock()
	ks, warn, err := p.loadKeys()
	if err != nil || warn != "" {
		return err
	}
	now := p.opts.Now()
	changed := false
	for _, name := range names {
		r, ok := ks.Keys[name]
		if !ok || r.expired(now) || !r.Sliding || r.TTL <= 0 {
			continue
		}
		exp := now.Add(ttlDuration(r.TTL)).UTC()
		r.Expires = &exp
		changed = true
	}
	if !changed {
		return nil
	}
	return p.keyStore().writeKeys(lk, ks.encode(), nil)
}

// Get returns the live value of one key; ok is false when it is missing
// or expired. It renews a sliding key, as a read by the model does.
func (p *Pad) Get(name string) (json.RawMessage, bool, error) {
	keys, err := p.Keys(KeyFilter{Names: []string{name}}, true)
	if err != nil || len(keys) == 0 {
		return nil, false, err
	}
	return keys[0].Value, true, nil
}

// checkTemplate refuses an [Options.Template] that does not parse as the
// pad's format (or, structured, does not satisfy the schema).
func (p *Pad) checkTemplate() error {
	if p.opts.Template == "" {
		return nil
	}
	st, err := p.parse([]byte(p.opts.Template))
	if err != nil {
		return fmt.Errorf("%w: template: %v", ErrOptions, err)
	}
	if st.obj != nil {
		if err := validateState(p.schema, st.obj); err != nil {
			return fmt.Errorf("%w: template: %v", ErrOptions, err)
		}
	}
	return nil
}
