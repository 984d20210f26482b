package toolsearch

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want string // words joined by spaces
	}{
		{"list_issues", "list issues"},
		{"github__list_issues", "github list issues"},
		{"listIssues", "list issues listissues"},
		{"pullNumber", "pull number pullnumber"},
		{"HTTPServer", "http server httpserver"},
		{"getHTTPResponseCode", "get http response code"}, // four parts: not joined
		{"kebab-case-name", "kebab case name"},
		{"files.read.v2", "files read v2"},
		{"k8s__pods_log", "k8s pods log"},
		{"s3_put_object", "s3 put object"},
		{"oauth2Token", "oauth2 token oauth2token"},
		{"GitHub's API", "git hub github s api"},
		{"user:ref-name", "user ref name"},
		{"ÉtéCafé", "été café étécafé"},
		{"  ", ""},
		{"", ""},
		{"X", "x"},
		{"ABC", "abc"},
		{"id", "id"},
	}
	for _, tt := range tests {
		got := strings.Join(splitWords(tt.in, nil), " ")
		if got != tt.want {
			t.Errorf("splitWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"issues", "issu"}, {"issue", "issu"},
		{"repositories", "repository"}, {"repository", "repository"},
		{"branches", "branch"}, {"boxes", "box"}, {"processes", "process"},
		{"create", "creat"}, {"created", "creat"}, {"creating", "creat"}, {"creation", "creat"},
		{"delete", "delet"}, {"deleted", "delet"}, {"deletion", "delet"},
		{"logs", "log"}, {"logging", "log"}, {"log", "log"},
		{"listing", "list"}, {"lists", "list"},
		{"charged", "charg"}, {"charges", "charg"}, {"charge", "charg"},
		{"deployment", "deploy"}, {"deployments", "deploy"}, {"deploy", "deploy"},
		{"payment", "payment"}, {"comment", "comment"},
		{"transition", "transit"}, {"transitions", "transit"},
		{"action", "action"}, {"actions", "action"},
		{"status", "status"}, {"statuses", "status"}, {"analysis", "analysis"}, {"access", "access"},
		{"subscription", "subscrib"}, {"subscribe", "subscrib"},
		{"description", "describ"}, {"describe", "describ"},
		{"kubernetes", "kubernetes"}, {"k8s", "k8s"}, {"pods", "pod"},
		{"string", "string"}, {"running", "run"}, {"stopped", "stop"}, {"installed", "install"},
		{"queries", "query"}, {"query", "query"},
	}
	for _, tt := range tests {
		if got := stem(tt.in); got != tt.want {
			t.Errorf("stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Show me the open pull requests", "show open pr"},
		{"list merge requests", "list pr"},
		{"How many orders?", "count order"},
		{"when are they both free/busy", "both freebusy"},
		{"what is the time zone of a user", "timezon user"},
		{"give the customer their money back", "giv customer moneyback"},
		{"the of and", ""},
	}
	for _, tt := range tests {
		got, _ := terms(tt.in, nil, nil)
		if s := strings.Join(got, " "); s != tt.want {
			t.Errorf("terms(%q) = %q, want %q", tt.in, s, tt.want)
		}
	}
}

func TestSynonyms(t *testing.T) {
	tests := []struct {
		word string
		want []string // stems that must be among its synonyms
		not  []string // stems that must not
	}{
		{"list", []string{"show", "get", "fetch", "retriev"}, []string{"delet"}},
		{"delete", []string{"remov", "drop", "trash"}, []string{"creat"}},
		{"create", []string{"add", "new", "mak"}, []string{"delet"}},
		{"ticket", []string{"issu", "bug"}, []string{"incident"}},
		{"pr", []string{"pullrequest", "mergerequest"}, nil},
		{"k8s", []string{"kubernetes", "kub", "kubectl"}, nil},
		{"container", []string{"pod"}, nil},
		{"repo", []string{"repository"}, nil},
		{"mail", []string{"email"}, nil},
		{"meeting", []string{"event", "calendar"}, nil},
		{"payment", []string{"charg", "pay"}, nil},
		{"sql", []string{"query", "select"}, nil},
		{"metric", []string{"prometheus", "promql"}, nil},
		{"document", []string{"fil"}, nil},
		{"chargeback", []string{"disput", "refund"}, nil},
	}
	for _, tt := range tests {
		got := synonyms[stem(tt.word)]
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("synonyms of %q = %v, missing %q", tt.word, got, w)
			}
		}
		for _, w := range tt.not {
			if slices.Contains(got, w) {
				t.Errorf("synonyms of %q = %v, must not hold %q", tt.word, got, w)
			}
		}
	}
}
