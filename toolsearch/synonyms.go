package toolsearch

import "strings"

// synonymGroups are the words a request and a tool use for the same thing.
// A query word also matches the other words of its groups, at
// synonymWeight: "show my tickets" finds list_issues, but a tool named with
// the request's own words still comes first. A word may sit in several
// groups (change is an edit and a diff). Entries are surface words; they are
// stemmed when the package loads. Keep it small and general: each group
// must hold across servers, not fit one query of the test set.
var synonymGroups = [][]string{
	{"list", "show", "get", "fetch", "retrieve", "view", "display", "see", "enumerate", "browse"},
	{"search", "find", "lookup", "look", "locate", "grep", "filter", "query"},
	{"read", "open", "view", "cat", "content"},
	{"delete", "remove", "rm", "drop", "destroy", "erase", "trash", "purge", "cancel"},
	{"create", "add", "new", "make", "open", "declare", "start", "insert", "register"},
	{"update", "edit", "modify", "change", "set", "patch", "alter", "fix"},
	{"move", "rename", "mv", "relocate"},
	{"write", "save", "overwrite", "store", "put"},
	{"issue", "ticket", "bug", "task", "story"},
	{"pr", "pullrequest", "mergerequest", "mr"},
	{"diff", "change", "patch", "changed"},
	{"review", "approve", "approval", "lgtm"},
	{"message", "chat", "msg", "post", "dm"},
	{"send", "post", "tell", "notify", "announce", "say", "ping"},
	{"reply", "respond", "answer", "response"},
	{"comment", "note", "remark"},
	{"k8s", "kubernetes", "kube", "kubectl", "cluster"},
	{"pod", "container"},
	{"deployment", "deploy", "app", "application", "workload", "rollout"},
	{"restart", "reboot", "bounce", "recycle", "rollout"},
	{"repo", "repository", "project"},
	{"email", "mail", "inbox", "gmail", "mailbox"},
	{"event", "meeting", "calendar", "appointment", "invitation", "invite", "call", "schedule",
		"today", "tomorrow", "yesterday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"},
	{"free", "busy", "freebusy", "availability", "available", "slot"},
	{"payment", "charge", "charged", "pay", "paid", "transaction", "billing"},
	{"invoice", "bill", "billing"},
	{"refund", "reimburse", "moneyback", "chargeback"},
	{"dispute", "chargeback"},
	{"balance", "fund", "money", "cash"},
	{"customer", "client", "buyer"},
	{"subscription", "plan", "recurring", "subscribe"},
	{"query", "sql", "select", "count"},
	{"describe", "schema", "column", "structure", "definition"},
	{"explain", "plan"},
	{"slow", "latency", "duration", "performance", "slowest", "slower"},
	{"log", "logs", "output", "stdout", "stderr", "journal"},
	{"error", "fail", "failure", "failed", "crash", "crashing", "exception", "broken", "5xx"},
	{"metric", "metrics", "prometheus", "promql", "rate", "graph"},
	{"trace", "span", "tracing"},
	{"alert", "alarm", "alerting"},
	{"silence", "mute", "snooze", "suppress"},
	{"incident", "outage", "downtime"},
	{"file", "document", "doc"},
	{"code", "source", "sourcecode"},
	{"directory", "folder", "dir"},
	{"user", "person", "member", "people", "profile"},
	{"channel", "room"},
	{"label", "tag", "folder", "archive"},
	{"attachment", "pdf", "download"},
	{"sprint", "iteration"},
	{"transition", "status", "resolve", "close", "done"},
	{"ci", "workflow", "action", "pipeline", "build", "job", "check"},
	{"image", "version", "tag"},
	{"usage", "top", "consumption", "cpu", "memory"},
	{"size", "big", "large", "info", "metadata", "stat"},
	{"dashboard", "panel", "grafana"},
	{"line", "row"},
	{"statement", "execute", "run", "exec"},
}

// phrases are word pairs that name one thing; each pair is joined into one
// word before indexing or searching (both sides alike), so "pull request"
// matches "PR" and not every tool with a request parameter.
var phrases = map[[2]string]string{
	{"pull", "request"}:  "pr",
	{"merge", "request"}: "pr",
	{"money", "back"}:    "moneyback",
	{"free", "busy"}:     "freebusy",
	{"time", "zone"}:     "timezone",
	{"how", "many"}:      "count",
}

// synonymWeight is a synonym's share of a query word's weight: enough to
// find a tool named otherwise, too little to beat one named as asked.
const synonymWeight = 0.7

var (
	synonyms      map[string][]string // stem → the other stems of its groups
	phraseStemmed map[[2]string]string
	phraseFirst   map[string]bool
)

func init() {
	synonyms = make(map[string][]string)
	for _, g := range synonymGroups {
		stems := make([]string, 0, len(g))
		for _, w := range g {
			stems = append(stems, stem(strings.ToLower(w)))
		}
		for _, s := range stems {
			for _, o := range stems {
				if o != s && !contains(synonyms[s], o) {
					synonyms[s] = append(synonyms[s], o)
				}
			}
		}
	}
	phraseStemmed = make(map[[2]string]string, len(phrases))
	phraseFirst = make(map[string]bool, len(phrases))
	for k, v := range phrases {
		phraseStemmed[[2]string{stem(k[0]), stem(k[1])}] = stem(v)
		phraseFirst[stem(k[0])] = true
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// terms appends the index terms of text to dst: its words, stop words
// dropped, stemmed, with phrases joined. The "how" of "how many" is a stop
// word, so pairs are looked up before stop words go.
func terms(text string, dst []string, buf []string) ([]string, []string) {
	buf = splitWords(text, buf[:0])
	for i := 0; i < len(buf); i++ {
		s := stem(buf[i])
		if i+1 < len(buf) && phraseFirst[s] {
			if j, ok := phraseStemmed[[2]string{s, stem(buf[i+1])}]; ok {
				dst = append(dst, j)
				i++
				continue
			}
		}
		if !stopWords[buf[i]] {
			dst = append(dst, s)
		}
	}
	return dst, buf
}
