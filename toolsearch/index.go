package toolsearch

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	// gjson: see signature.go.
	"github.com/tidwall/gjson"
)

// Tool is one upstream tool as the index sees it.
type Tool struct {
	// Name is the name the client calls it by (the proxy's exposed name,
	// such as "github__list_issues").
	Name string
	// Server is the name of the upstream server it comes from.
	Server string
	// Description is the tool's description as the upstream lists it.
	Description string
	// InputSchema is the tool's JSON Schema for its arguments; it may be
	// empty or malformed.
	InputSchema json.RawMessage
}

// Hit is one search result.
type Hit struct {
	// Tool is the tool's position in the slice given to [NewIndex].
	Tool int
	// Name is the tool's exposed name.
	Name string
	// Score is the ranking score: higher is better, comparable only
	// within one search.
	Score float64
}

// MaxQueryWords is how many words of a query count (stop words aside): a
// request is a sentence, and the words past these would only cost time.
const MaxQueryWords = 64

// MaxQueryBytes is how much of a query [Index.Search] and of a name
// [Index.Closest] read: more than MaxQueryWords words of any length a
// request has, so that a megabyte of query is not split into words to
// find that only the first ones count.
const MaxQueryBytes = 4096

// head is s cut to at most MaxQueryBytes bytes, at a character boundary.
func head(s string) string {
	if len(s) <= MaxQueryBytes {
		return s
	}
	n := MaxQueryBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// DefaultLimit is the number of hits [Index.Search] answers for a limit of
// zero or less.
const DefaultLimit = 5

// MaxLimit caps the limit of [Index.Search]: a search answer is meant to be
// short, and a client that wants more should search better.
const MaxLimit = 50

// The fields of a tool, each with its weight (how much a match there
// counts) and its length normalisation (BM25's b: 0 ignores the field's
// length, 1 divides by it in full). The name is the strongest evidence and
// short; descriptions vary in length most.
const (
	fieldName = iota
	fieldServer
	fieldDesc
	fieldParam
	fieldParamDesc
	numFields
)

var (
	fieldWeight = [numFields]float64{fieldName: 3, fieldServer: 1.5, fieldDesc: 1, fieldParam: 0.7, fieldParamDesc: 0.5}
	fieldB      = [numFields]float64{fieldName: 0.3, fieldServer: 0, fieldDesc: 0.6, fieldParam: 0.5, fieldParamDesc: 0.6}
)

// nameCoverage is how much a tool's score grows when the query holds
// every word of its name (synonyms in part): ×1.5 at most.
const nameCoverage = 0.5

// k1 is BM25's term-frequency saturation: a word's tenth occurrence in a
// tool adds little over its second.
const k1 = 1.2

// Index ranks a fixed set of tools. Build it once per catalogue change
// with [NewIndex]; it is immutable and safe for concurrent use.
type Index struct {
	tools      []Tool
	termID     map[string]int32
	postings   [][]posting // by term ID, in tool order
	idf        []float32   // by term ID
	groupIDF   map[string]float32
	byName     map[string]int
	lowerNames []string   // the exposed names in lower case, for Closest
	words      [][]string // the stemmed words of each exposed name, for Closest
	nameIDs    [][]int32  // the distinct term IDs of each tool's name field
	scratch    sync.Pool  // *scratch
}

// A posting is one tool containing a term, with the term's whole BM25F
// contribution for that tool (IDF times saturated, weighted,
// length-normalised frequency) computed once at build time: a search only
// adds them up.
type posting struct {
	tool   int32
	weight float32
}

// scratch is one search's working memory, pooled: scores by tool, and the
// tools touched, so only they are read and reset.
type scratch struct {
	score       []float32 // the query's score so far
	best        []float32 // the current word's best match
	touched     []int32
	wordTouched []int32
	terms       []queryTerm
	matched     []float32 // by term ID: how well the query holds the term (1 said, less a synonym)
	matchedIDs  []int32
	buf         []string
	words       []string
}

type queryTerm struct {
	id     int32
	weight float32 // 1 for a word of the query, less for a synonym
	said   bool    // a word of the query, not a synonym
}

// NewIndex indexes tools. The slice is kept (not copied): do not change
// it while the index is in use.
func NewIndex(tools []Tool) *Index {
	ix := &Index{
		tools:  tools,
		termID: make(map[string]int32, 1024),
		byName: make(map[string]int, len(tools)),
		words:  make([][]string, len(tools)),
	}
	// Pass 1: every field of every tool as term IDs, and field lengths.
	docs := make([][numFields][]int32, len(tools))
	var total [numFields]float64
	cache := wordCache{}
	var infos []wordInfo
	var text strings.Builder
	var paramText strings.Builder
	for i := range tools {
		t := &tools[i]
		low := strings.ToLower(t.Name)
		ix.lowerNames = append(ix.lowerNames, low)
		if _, dup := ix.byName[low]; !dup {
			ix.byName[low] = i
		}
		add := func(f int, s string) {
			infos = infos[:0]
			eachWord(s, func(w string) { infos = append(infos, cache.info(ix, w)) })
			for j := 0; j < len(infos); j++ {
				w := infos[j]
				if w.first && j+1 < len(infos) {
					if p, ok := phraseStemmed[[2]string{w.stem, infos[j+1].stem}]; ok {
						docs[i][f] = append(docs[i][f], ix.id(p))
						j++
						continue
					}
				}
				if !w.stop {
					docs[i][f] = append(docs[i][f], w.id)
				}
			}
		}
		add(fieldName, t.Name)
		ix.words[i] = stemmedWords(t.Name)
		add(fieldServer, t.Server)
		add(fieldDesc, t.Description)
		text.Reset()
		paramText.Reset()
		schemaText(t.InputSchema, &text, &paramText)
		add(fieldParam, text.String())
		add(fieldParamDesc, paramText.String())
		for f := range numFields {
			total[f] += float64(len(docs[i][f]))
		}
	}
	n := float64(len(tools))
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = math.Max(total[f]/math.Max(n, 1), 1)
	}
	// Pass 2: each tool's weighted, normalised frequency per term.
	ix.postings = make([][]posting, len(ix.termID))
	freq := make([]float64, len(ix.termID))
	var seen []int32
	for i := range docs {
		seen = seen[:0]
		for f := range numFields {
			ids := docs[i][f]
			norm := 1 - fieldB[f] + fieldB[f]*float64(len(ids))/avg[f]
			w := fieldWeight[f] / norm
			for _, id := range ids {
				if freq[id] == 0 {
					seen = append(seen, id)
				}
				freq[id] += w
			}
		}
		for _, id := range seen {
			tf := freq[id]
			ix.postings[id] = append(ix.postings[id], posting{tool: int32(i), weight: float32(tf / (tf + k1))})
			freq[id] = 0
		}
	}
	idf := func(df int) float32 {
		return float32(math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5)))
	}
	ix.idf = make([]float32, len(ix.postings))
	for id, ps := range ix.postings {
		ix.idf[id] = idf(len(ps))
		for j := range ps {
			ps[j].weight *= ix.idf[id]
		}
	}
	// A word's synonyms count with the IDF of the whole group (the tools
	// holding any of its words), not their own: a rare synonym ("story")
	// must not outweigh the common word it stands for ("issue").
	ix.groupIDF = make(map[string]float32, len(synonyms))
	mark := make([]bool, len(tools))
	var marked []int32
	for w, syns := range synonyms {
		marked = marked[:0]
		for _, x := range append([]string{w}, syns...) {
			id, ok := ix.termID[x]
			if !ok {
				continue
			}
			for _, p := range ix.postings[id] {
				if !mark[p.tool] {
					mark[p.tool] = true
					marked = append(marked, p.tool)
				}
			}
		}
		if len(marked) > 0 {
			ix.groupIDF[w] = idf(len(marked))
		}
		for _, t := range marked {
			mark[t] = false
		}
	}
	ix.nameIDs = make([][]int32, len(tools))
	for i := range docs {
		var ids []int32
		for _, id := range docs[i][fieldName] {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		ix.nameIDs[i] = ids
	}
	nterms := len(ix.termID)
	ix.scratch.New = func() any {
		return &scratch{score: make([]float32, len(tools)), best: make([]float32, len(tools)), matched: make([]float32, nterms)}
	}
	return ix
}

func (ix *Index) id(term string) int32 {
	if id, ok := ix.termID[term]; ok {
		return id
	}
	id := int32(len(ix.termID))
	ix.termID[term] = id
	return id
}

// Len is the number of tools in the index.
func (ix *Index) Len() int { return len(ix.tools) }

// Tool returns the tool at position i, as given to [NewIndex].
func (ix *Index) Tool(i int) Tool { return ix.tools[i] }

// Lookup finds a tool by its exposed name, ignoring case.
func (ix *Index) Lookup(name string) (int, bool) {
	i, ok := ix.byName[strings.ToLower(strings.TrimSpace(name))]
	return i, ok
}

// Search answers the tools that best match query, best first, at most
// limit of them ([DefaultLimit] for 0 or less, capped at [MaxLimit]). A
// query that is exactly a tool's exposed name answers that tool first.
// Tools that match no word of the query are never answered, so an empty
// or all-stop-word query answers nothing, and neither are those scoring
// under 30% of the best: an answer may hold fewer than limit hits. Only the first [MaxQueryWords]
// words of its first [MaxQueryBytes] bytes count.
func (ix *Index) Search(query string, limit int) []Hit {
	query = head(query)
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	s := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(s)

	s.words, s.buf = terms(query, s.words[:0], s.buf)
	s.words = s.words[:min(len(s.words), MaxQueryWords)]
	s.touched = s.touched[:0]
	s.matchedIDs = s.matchedIDs[:0]
	for i, w := range s.words {
		if contains(s.words[:i], w) {
			continue // a word said twice counts once
		}
		// A word scores its best match in a tool: itself or one synonym,
		// never the sum, or a tool that lists five kinds of issue (Story,
		// Task, Bug, Epic) would outrank one that says "issue".
		s.terms = ix.addTerm(s.terms[:0], w, 1, true)
		if g, ok := ix.groupIDF[w]; ok {
			for _, syn := range synonyms[w] {
				if id, ok := ix.termID[syn]; ok {
					// Postings hold syn's own IDF; trade it for the group's.
					s.terms = ix.addTerm(s.terms, syn, synonymWeight*g/ix.idf[id], false)
				}
			}
		}
		s.wordTouched = s.wordTouched[:0]
		for _, qt := range s.terms {
			m := float32(synonymWeight)
			if qt.said {
				m = 1
			}
			if s.matched[qt.id] == 0 {
				s.matchedIDs = append(s.matchedIDs, qt.id)
			}
			s.matched[qt.id] = max(s.matched[qt.id], m)
			for _, p := range ix.postings[qt.id] {
				v := qt.weight * p.weight
				if b := s.best[p.tool]; v > b {
					if b == 0 {
						s.wordTouched = append(s.wordTouched, p.tool)
					}
					s.best[p.tool] = v
				}
			}
		}
		for _, t := range s.wordTouched {
			if s.score[t] == 0 {
				s.touched = append(s.touched, t)
			}
			s.score[t] += s.best[t]
			s.best[t] = 0
		}
	}
	exact, isExact := ix.Lookup(query)
	defer func() {
		for _, id := range s.matchedIDs {
			s.matched[id] = 0
		}
	}()
	// Keep the best limit hits in hits, best first (insertion: limit is small).
	hits := make([]Hit, 0, limit)
	for _, t := range s.touched {
		sc := float64(s.score[t])
		s.score[t] = 0
		if ids := ix.nameIDs[t]; len(ids) > 0 {
			// The share of the tool's name the query says: of two tools
			// matching as well, the one whose name is all asked for
			// (list_issues for "list open issues") is meant more often
			// than one with a word not asked for (search_issues).
			var c float32
			for _, id := range ids {
				c += s.matched[id]
			}
			sc *= 1 + nameCoverage*float64(c)/float64(len(ids))
		}
		if isExact && int(t) == exact {
			sc += exactBoost
		}
		if len(hits) == limit && !better(sc, int(t), hits[limit-1]) {
			continue
		}
		if len(hits) < limit {
			hits = append(hits, Hit{})
		}
		j := len(hits) - 1
		for ; j > 0 && better(sc, int(t), hits[j-1]); j-- {
			hits[j] = hits[j-1]
		}
		hits[j] = Hit{Tool: int(t), Name: ix.tools[t].Name, Score: sc}
	}
	if isExact && (len(hits) == 0 || hits[0].Tool != exact) {
		// The name matched no term (a name of stop words only, say).
		hits = append([]Hit{{Tool: exact, Name: ix.tools[exact].Name, Score: exactBoost}}, hits...)
		hits = hits[:min(len(hits), limit)]
		return hits
	}
	if len(hits) == 0 {
		return hits
	}
	best := hits[0].Score
	if isExact { // hits[0] is the exact name, boosted
		best -= exactBoost
		if len(hits) > 1 {
			best = max(best, hits[1].Score)
		}
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score < minRelativeScore*best {
			return hits[:i]
		}
	}
	return hits
}

// exactBoost puts a tool named exactly as the query above any other.
const exactBoost = 1e6

// minRelativeScore: hits scoring under this share of the best are left
// out. On the test set they never held the tool asked for in the top 3
// (up to 0.5 nothing was lost), and they cost a line each.
const minRelativeScore = 0.3

// better orders hits: higher score first, then the earlier tool, so equal
// scores answer in catalogue order every time.
func better(score float64, tool int, h Hit) bool {
	return score > h.Score || score == h.Score && tool < h.Tool
}

// addTerm adds a query term, keeping the highest weight of a term met
// twice (a word and another's synonym).
func (ix *Index) addTerm(ts []queryTerm, term string, w float32, said bool) []queryTerm {
	id, ok := ix.termID[term]
	if !ok {
		return ts
	}
	for i := range ts {
		if ts[i].id == id {
			ts[i].weight = max(ts[i].weight, w)
			ts[i].said = ts[i].said || said
			return ts
		}
	}
	return append(ts, queryTerm{id: id, weight: w, said: said})
}

// schemaText writes the words of a schema's arguments: their names (and
// those of one level of nested properties) to names, their descriptions,
// titles and enum values to descs. A malformed schema writes nothing.
func schemaText(schema json.RawMessage, names, descs *strings.Builder) {
	if !usable(schema) {
		return
	}
	var walk func(props gjson.Result, depth int)
	walk = func(props gjson.Result, depth int) {
		if !props.IsObject() {
			return
		}
		props.ForEach(func(k, v gjson.Result) bool {
			names.WriteString(k.String())
			names.WriteByte(' ')
			if !v.IsObject() {
				return true
			}
			n := parseNode(v)
			for _, d := range [...]gjson.Result{n.desc, n.title} {
				if d.Type == gjson.String {
					descs.WriteString(d.Str)
					descs.WriteByte(' ')
				}
			}
			var items node
			if n.items.IsObject() {
				items = parseNode(n.items)
			}
			for _, e := range [...]gjson.Result{n.enum, items.enum} {
				e.ForEach(func(_, x gjson.Result) bool {
					if x.Type == gjson.String {
						descs.WriteString(x.Str)
						descs.WriteByte(' ')
					}
					return true
				})
			}
			if depth == 0 {
				walk(n.props, 1)
				walk(items.props, 1)
			}
			return true
		})
	}
	walk(parseNode(gjson.ParseBytes(schema)).props, 0)
}

// wordInfo is what building an index needs of one word as written: its
// stem and term ID, whether it is a stop word, and whether it may start a
// phrase.
type wordInfo struct {
	stem  string
	id    int32
	stop  bool
	first bool
}

// wordCache maps words as written to their wordInfo: a catalogue says the
// same few hundred words over and over, and this is one map lookup for
// what would be lower-casing, stemming and three lookups.
type wordCache map[string]wordInfo

func (c wordCache) info(ix *Index, raw string) wordInfo {
	if w, ok := c[raw]; ok {
		return w
	}
	low := lower(raw)
	s := stem(low)
	w := wordInfo{stem: s, id: ix.id(s), stop: stopWords[low], first: phraseFirst[s]}
	c[strings.Clone(raw)] = w
	return w
}

// stemmedWords are the distinct stemmed words of a name, stop words kept:
// what Closest compares.
func stemmedWords(name string) []string {
	ws := splitWords(name, nil)
	ws = ws[:min(len(ws), MaxQueryWords)] // a name of thousands of words is no name
	out := ws[:0]
	for _, w := range ws {
		s := stem(w)
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
