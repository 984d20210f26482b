package pad

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// ReadOptions are the options of one read ([Pad.ReadWith]); the zero
// value reads as [Pad.Read] does, without renewing sliding keys.
type ReadOptions struct {
	// Tags keeps ledger entries and keys carrying any of these tags.
	Tags []string
	// Keys, when not empty, reads only these keys and namespaces (a name
	// ending in ":" selects a namespace): no sections, state or ledger.
	Keys []string
	// Format is "markdown", "xml", "json" or "kv"; "" means
	// [Options.Render].
	Format string
	// MaxTokens bounds this rendering, counted with [Options.Count]. The
	// configured [Options.MaxTokens] is a ceiling: a larger value, or 0,
	// means the configured bound.
	MaxTokens int
	// Renew renews the TTL of the sliding keys the rendering shows: the
	// model read them. read_scratchpad renews; the resource, the prompt
	// and the CLI do not.
	Renew bool
}

// ReadWith renders the pad for the model with per-read options; it is
// what read_scratchpad returns. Like [Pad.View] it quarantines a broken
// file and consumes pending notes.
func (p *Pad) ReadWith(o ReadOptions) (string, error) {
	mode := o.Format
	if mode == "" {
		mode = p.opts.Render
	}
	if !slices.Contains(RenderModes, mode) {
		return "", fmt.Errorf("%w: format %q (want %s)", errBadArguments, mode, strings.Join(RenderModes, ", "))
	}
	if o.MaxTokens < 0 {
		return "", fmt.Errorf("%w: max_tokens must be positive", errBadArguments)
	}
	for _, k := range o.Keys {
		if msg := checkKeyName(strings.TrimSuffix(strings.TrimSuffix(k, "*"), ":")); msg != "" {
			return "", fmt.Errorf("%w: keys: %s: %q", errBadArguments, msg, k)
		}
	}
	max := p.opts.MaxTokens
	if o.MaxTokens > 0 && (max == 0 || o.MaxTokens < max) {
		max = o.MaxTokens
	}
	v, err := p.View(o.Tags)
	if err != nil {
		return "", err
	}
	if err := p.addKeys(v, KeyFilter{Names: o.Keys, Tags: o.Tags}); err != nil {
		return "", err
	}
	v.KeysOnly = len(o.Keys) > 0
	out, shown := p.renderShown(v, mode, max)
	if o.Renew {
		var sliding []string
		for _, k := range shown {
			if k.Sliding {
				sliding = append(sliding, k.Name)
			}
		}
		if len(sliding) > 0 {
			if err := p.renew(sliding); err != nil {
				// The read stands; say that the TTLs did not move.
				v.Warnings = append(v.Warnings, fmt.Sprintf("the sliding keys shown were not renewed: %v", err))
				out, _ = p.renderShown(v, mode, max)
			}
		}
	}
	return out, nil
}

// addKeys puts the live keys f selects into v, with their stats line.
func (p *Pad) addKeys(v *View, f KeyFilter) error {
	keys, warn, err := p.liveKeys(f, false)
	if err != nil {
		return err
	}
	if warn != "" {
		v.Warnings = append(v.Warnings, warn+"; the next write moves them aside and starts the keys empty")
	}
	v.Keys = keys
	v.KeyStats = keyStats(keys)
	v.Header = p.opts.Header
	return nil
}

// renderShown is renderMax that also says which keys the rendering
// shows: keys are left out only when folding every ledger entry is not
// enough (see renderMax), and then as fitKeys decides.
func (p *Pad) renderShown(v *View, mode string, max int) (string, []KeyView) {
	out := p.renderMax(v, mode, max)
	n := len(v.Entries)
	if max <= 0 || len(v.Keys) == 0 || p.opts.Count(renderView(v, mode, n, "")) <= max {
		return out, v.Keys
	}
	if w, kept := p.fitKeys(v, mode, n, max); w != nil {
		return out, kept
	}
	return out, v.Keys
}

// keyDropOrder is the order keys are left out in to fit max_tokens: least
// recently set first, then by name.
func keyDropOrder(keys []KeyView) []int {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ka, kb := keys[order[a]], keys[order[b]]
		if !ka.Updated.Equal(kb.Updated) {
			return ka.Updated.Before(kb.Updated)
		}
		return ka.Name < kb.Name
	})
	return order
}

// withoutKeys returns v with the first d keys of the drop order left out.
func withoutKeys(v *View, order []int, d int) *View {
	cp := *v
	drop := map[int]bool{}
	for _, i := range order[:d] {
		drop[i] = true
		cp.KeysLeftOut = append(cp.KeysLeftOut, v.Keys[i].Name)
	}
	cp.Keys = nil
	for i, k := range v.Keys {
		if !drop[i] {
			cp.Keys = append(cp.Keys, k)
		}
	}
	return &cp
}

// fitKeys finds the fewest keys to leave out, with the ledger folded by
// folded entries, for the rendering to fit max; it returns that view (nil
// if nothing fits even without keys) and the keys it keeps.
func (p *Pad) fitKeys(v *View, mode string, folded, max int) (*View, []KeyView) {
	order := keyDropOrder(v.Keys)
	fits := func(d int) bool {
		return p.opts.Count(renderView(withoutKeys(v, order, d), mode, folded, "")) <= max
	}
	n := len(v.Keys)
	if n == 0 || !fits(n) {
		return nil, nil
	}
	// The fewest dropped keys that fit, in [1, n] (n fits).
	d := 1 + sort.Search(n-1, func(i int) bool { return fits(1 + i) })
	w := withoutKeys(v, order, d)
	return w, w.Keys
}

// dropKeys renders v within max once folding folded ledger entries was
// not enough: keys are left out, least recently set first, whole. If even
// that does not fit, everything is shown with a warning.
func (p *Pad) dropKeys(v *View, mode string, folded, max int) string {
	if w, _ := p.fitKeys(v, mode, folded, max); w != nil {
		return renderView(w, mode, folded, "")
	}
	all := withoutKeys(v, keyDropOrder(v.Keys), len(v.Keys))
	c := p.opts.Count(renderView(all, mode, folded, ""))
	msg := overBudget(c, max)
	if len(v.Keys) > 0 {
		msg = fmt.Sprintf("the pad renders to about %d tokens, over max_tokens %d, even with every ledger entry folded and every key left out; sections are never cut, so condense them", c, max)
	}
	return renderView(v, mode, folded, msg)
}

// keyStats is one line about the keys: count and size, keys per
// namespace, tags with counts, keys with a TTL, oldest and newest.
func keyStats(keys []KeyView) string {
	if len(keys) == 0 {
		return ""
	}
	size := 0
	ns := map[string]int{}
	tags := map[string]int{}
	withTTL, sliding := 0, 0
	oldest, newest := keys[0], keys[0]
	for _, k := range keys {
		size += len(k.Name) + len(k.Value)
		ns[k.Namespace()]++
		for _, t := range k.Tags {
			tags[t]++
		}
		if !k.Expires.IsZero() {
			withTTL++
			if k.Sliding {
				sliding++
			}
		}
		if k.Updated.Before(oldest.Updated) {
			oldest = k
		}
		if k.Updated.After(newest.Updated) {
			newest = k
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d key", len(keys))
	if len(keys) != 1 {
		b.WriteString("s")
	}
	fmt.Fprintf(&b, ", %d bytes", size)
	if len(ns) > 1 || ns[""] == 0 {
		b.WriteString("; namespaces: " + countList(ns, "(top)"))
	}
	if len(tags) > 0 {
		b.WriteString("; tags: " + countList(tags, ""))
	}
	if withTTL > 0 {
		fmt.Fprintf(&b, "; %d with TTL", withTTL)
		if sliding > 0 {
			fmt.Fprintf(&b, " (%d sliding)", sliding)
		}
	}
	if len(keys) > 1 {
		fmt.Fprintf(&b, "; oldest %s (%s), newest %s (%s)", oldest.Name, entryTime(oldest.Updated), newest.Name, entryTime(newest.Updated))
	}
	return b.String()
}

// countList writes "a 2, b 1", sorted by name; empty names show as empty.
func countList(m map[string]int, empty string) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		label := n
		if n == "" {
			label = empty
		}
		parts[i] = fmt.Sprintf("%s %d", label, m[n])
	}
	return strings.Join(parts, ", ")
}

// keyNote is a key's attributes for text renderings: tags, TTL and expiry.
func keyNote(k KeyView) string {
	var parts []string
	if len(k.Tags) > 0 {
		parts = append(parts, "tags "+strings.Join(k.Tags, ","))
	}
	if !k.Expires.IsZero() {
		s := "ttl " + formatSeconds(k.TTL.Seconds())
		if k.Sliding {
			s += " sliding"
		}
		parts = append(parts, s+", expires "+entryTime(k.Expires))
	}
	return strings.Join(parts, "; ")
}

func hasKeysBlock(v *View) bool {
	return v.KeysOnly || len(v.Keys) > 0 || len(v.KeysLeftOut) > 0
}

func writeKeysMarkdown(b *strings.Builder, v *View) {
	if !hasKeysBlock(v) {
		return
	}
	total := len(v.Keys) + len(v.KeysLeftOut)
	fmt.Fprintf(b, "## Keys (update_scratchpad set/delete; %d shown of %d)\n", len(v.Keys), total)
	if total == 0 {
		b.WriteString("(none)\n")
	}
	for _, k := range v.Keys {
		fmt.Fprintf(b, "- %s = %s", k.Name, k.Value)
		if note := keyNote(k); note != "" {
			fmt.Fprintf(b, "  (%s)", note)
		}
		b.WriteString("\n")
	}
	if v.KeyStats != "" {
		fmt.Fprintf(b, "Key stats: %s\n", v.KeyStats)
	}
	b.WriteString("\n")
}

// leftOutText says what a rendering left out to fit max_tokens, or "".
func leftOutText(v *View, omitted int) string {
	var parts []string
	if omitted > 0 {
		parts = append(parts, fmt.Sprintf("%d oldest ledger entries", omitted))
	}
	if n := len(v.KeysLeftOut); n > 0 {
		names := v.KeysLeftOut
		more := ""
		if len(names) > 10 {
			names, more = names[:10], fmt.Sprintf(" and %d more", n-10)
		}
		parts = append(parts, fmt.Sprintf("%d keys left out (least recently set): %s%s", n, strings.Join(names, ", "), more))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Left out to fit max_tokens %d: %s. Read them with read_scratchpad keys or tags.", v.MaxTokens, strings.Join(parts, "; "))
}

func writeFooterMarkdown(b *strings.Builder, v *View, omitted int) {
	if s := leftOutText(v, omitted); s != "" {
		fmt.Fprintf(b, "\n_%s_\n", s)
	}
}

func writeKeysXML(b *strings.Builder, v *View) {
	if !hasKeysBlock(v) {
		return
	}
	fmt.Fprintf(b, "<keys shown=\"%d\" total=\"%d\"", len(v.Keys), len(v.Keys)+len(v.KeysLeftOut))
	if v.KeyStats != "" {
		fmt.Fprintf(b, " stats=\"%s\"", xmlEscape(v.KeyStats))
	}
	b.WriteString(">\n")
	for _, k := range v.Keys {
		fmt.Fprintf(b, "<key name=\"%s\"", xmlEscape(k.Name))
		if len(k.Tags) > 0 {
			fmt.Fprintf(b, " tags=\"%s\"", xmlEscape(strings.Join(k.Tags, ",")))
		}
		if !k.Expires.IsZero() {
			fmt.Fprintf(b, " ttl=\"%s\" sliding=\"%t\" expires=\"%s\"", formatSeconds(k.TTL.Seconds()), k.Sliding, entryTime(k.Expires))
		}
		fmt.Fprintf(b, ">%s</key>\n", xmlEscape(string(k.Value)))
	}
	b.WriteString("</keys>\n")
}

func writeFooterXML(b *strings.Builder, v *View, omitted int) {
	if s := leftOutText(v, omitted); s != "" {
		fmt.Fprintf(b, "<left_out ledger=\"%d\" keys=\"%s\">%s</left_out>\n", omitted, xmlEscape(strings.Join(v.KeysLeftOut, ",")), xmlEscape(s))
	}
}

type jsonKey struct {
	Name    string          `json:"name"`
	Value   json.RawMessage `json:"value"`
	Tags    []string        `json:"tags,omitempty"`
	TTL     float64         `json:"ttl,omitempty"`
	Sliding bool            `json:"sliding,omitempty"`
	Expires *time.Time      `json:"expires,omitempty"`
}

func jsonKeys(keys []KeyView) []jsonKey {
	var out []jsonKey
	for _, k := range keys {
		jk := jsonKey{Name: k.Name, Value: k.Value, Tags: k.Tags, Sliding: k.Sliding}
		if !k.Expires.IsZero() {
			e := k.Expires.UTC()
			jk.Expires, jk.TTL = &e, k.TTL.Seconds()
		}
		out = append(out, jk)
	}
	return out
}

type jsonLeftOut struct {
	MaxTokens     int      `json:"max_tokens"`
	LedgerEntries int      `json:"ledger_entries,omitempty"`
	Keys          []string `json:"keys_left_out,omitempty"`
}

func jsonLeftOutOf(v *View, omitted int) *jsonLeftOut {
	if omitted == 0 && len(v.KeysLeftOut) == 0 {
		return nil
	}
	return &jsonLeftOut{MaxTokens: v.MaxTokens, LedgerEntries: omitted, Keys: v.KeysLeftOut}
}

// renderKeysJSON is the JSON rendering of a read of some keys.
func renderKeysJSON(v *View, warnings []string) string {
	out := struct {
		Header   string       `json:"header,omitempty"`
		Notes    []string     `json:"notes,omitempty"`
		Warnings []string     `json:"warnings,omitempty"`
		Keys     []jsonKey    `json:"keys"`
		KeyStats string       `json:"key_stats,omitempty"`
		LeftOut  *jsonLeftOut `json:"left_out,omitempty"`
	}{v.Header, v.Notes, warnings, jsonKeys(v.Keys), v.KeyStats, jsonLeftOutOf(v, 0)}
	if out.Keys == nil {
		out.Keys = []jsonKey{}
	}
	return string(marshalNoEscape(out, "  "))
}
