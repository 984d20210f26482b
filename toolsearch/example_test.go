package toolsearch_test

import (
	"encoding/json"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/toolsearch"
)

func ExampleIndex_Search() {
	ix := toolsearch.NewIndex([]toolsearch.Tool{
		{Name: "github__list_issues", Server: "github", Description: "List issues in a GitHub repository.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"state":{"type":"string","enum":["open","closed","all"]}},"required":["owner","repo"]}`)},
		{Name: "k8s__pods_log", Server: "kubernetes", Description: "Get the logs of a pod's container.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"previous":{"type":"boolean"}},"required":["name"]}`)},
		{Name: "slack__post_message", Server: "slack", Description: "Post a message to a channel.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"channel":{"type":"string"},"text":{"type":"string"}},"required":["channel","text"]}`)},
	})
	hits := ix.Search("show me the open tickets on github", 2)
	fmt.Print(ix.Format(hits))
	fmt.Println(ix.Closest("k8s__pod_logs", 2))
	// Output:
	// github__list_issues(owner: string, repo: string, state?: "open"|"closed"|"all") — List issues in a GitHub repository.
	// [k8s__pods_log]
}

func ExampleSignature() {
	fmt.Println(toolsearch.Signature(json.RawMessage(`{
		"type": "object",
		"properties": {
			"per_page": {"type": "integer"},
			"owner": {"type": "string"},
			"labels": {"type": "array", "items": {"type": "string"}},
			"sort": {"enum": ["created", "updated", "comments", "reactions", "interactions"]},
			"since": {"type": ["string", "null"]},
			"filter": {"type": "object", "properties": {"author": {}, "milestone": {}}, "required": ["author"]}
		},
		"required": ["owner"]
	}`)))
	// Output:
	// owner: string, per_page?: integer, labels?: string[], sort?: "created"|"updated"|"comments"|"reactions"|…, since?: string|null, filter?: {author, milestone?}
}
