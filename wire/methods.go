package wire

import "fmt"

// MethodInfo is what the wire says about one method.
type MethodInfo struct {
	// In2025 and In20260728 say which eras have the method.
	In2025, In20260728 bool
	// NameField is the params member the Mcp-Name header repeats ("" if none).
	NameField string
	// MayNeedInput: the method may answer an input-required result and takes
	// inputResponses/requestState on its retry (2026-07-28).
	MayNeedInput bool
	// Cacheable: its 2026-07-28 result carries ttlMs and cacheScope.
	Cacheable bool
	// Notification: it is sent without an id.
	Notification bool
	// ServerToClient: a request the server sends (2025) or an input request
	// kind (2026-07-28, inside an input-required result).
	ServerToClient bool
	// Extension names the extension (SEP-2133) the method belongs to: a
	// client that did not declare it gets -32601 ([Negotiated]).
	Extension string
}

// methods is the table of client→server methods (and, marked ServerToClient,
// the server→client ones). It follows the 2026-07-28 schema and go-sdk v1.8.0
// (server.go: the methods removed in the new protocol).
var methods = map[string]MethodInfo{
	"initialize":                       {In2025: true},
	"ping":                             {In2025: true},
	"logging/setLevel":                 {In2025: true},
	"resources/subscribe":              {In2025: true},
	"resources/unsubscribe":            {In2025: true},
	"notifications/initialized":        {In2025: true, Notification: true},
	"notifications/roots/list_changed": {In2025: true, Notification: true},

	"server/discover":          {In20260728: true, Cacheable: true},
	"subscriptions/listen":     {In20260728: true},
	"tools/list":               {In2025: true, In20260728: true, Cacheable: true},
	"prompts/list":             {In2025: true, In20260728: true, Cacheable: true},
	"resources/list":           {In2025: true, In20260728: true, Cacheable: true},
	"resources/templates/list": {In2025: true, In20260728: true, Cacheable: true},
	"resources/read":           {In2025: true, In20260728: true, Cacheable: true, MayNeedInput: true, NameField: "uri"},
	"tools/call":               {In2025: true, In20260728: true, MayNeedInput: true, NameField: "name"},
	"prompts/get":              {In2025: true, In20260728: true, MayNeedInput: true, NameField: "name"},
	"completion/complete":      {In2025: true, In20260728: true},

	// Tasks: 2025-11-25 core, the io.modelcontextprotocol/tasks extension in
	// 2026-07-28 (where tasks/list and tasks/result are gone).
	"tasks/get":    {In2025: true, In20260728: true, NameField: "taskId"},
	"tasks/update": {In20260728: true, NameField: "taskId"},
	"tasks/cancel": {In2025: true, In20260728: true, NameField: "taskId"},
	"tasks/list":   {In2025: true},
	"tasks/result": {In2025: true},

	"notifications/cancelled": {In2025: true, In20260728: true, Notification: true},
	"notifications/progress":  {In2025: true, Notification: true},

	// Skills (SEP-2640), in both eras; cacheable as the TS SDK 2.4.0
	// server makes them (skills.go).
	MethodSkillsList:    {In2025: true, In20260728: true, Cacheable: true, Extension: ExtensionSkills},
	MethodSkillsGet:     {In2025: true, In20260728: true, Cacheable: true, Extension: ExtensionSkills},
	MethodDirectoryRead: {In2025: true, In20260728: true, Cacheable: true, Extension: ExtensionSkills},

	"sampling/createMessage": {In2025: true, In20260728: true, ServerToClient: true},
	"elicitation/create":     {In2025: true, In20260728: true, ServerToClient: true},
	"roots/list":             {In2025: true, In20260728: true, ServerToClient: true},
}

// Method returns what the wire says about a method, and whether it is known.
// Names are case-sensitive: "TOOLS/LIST" is not a method.
func Method(name string) (MethodInfo, bool) {
	m, ok := methods[name]
	return m, ok
}

// Has reports whether era has the client→server method name.
func (m MethodInfo) Has(era Era) bool {
	if m.ServerToClient {
		return false
	}
	if era == Era20260728 {
		return m.In20260728
	}
	return m.In2025
}

// CheckMethod is -32601 (HTTP 404) unless the client may send method in era:
// unknown methods, removed ones (initialize, ping, logging/setLevel,
// resources/(un)subscribe, tasks/list, tasks/result in 2026-07-28), new ones in
// 2025 (server/discover), and server→client requests sent by a client.
func CheckMethod(era Era, method string) *Error {
	if m, ok := methods[method]; ok && m.Has(era) {
		return nil
	}
	return MethodNotFound(method)
}

// Negotiated is -32601 (HTTP 404) when method belongs to an extension the
// client did not declare (declared reports whether it declared an id):
// a client that never asked for skills is not answered skills/list.
func Negotiated(method string, declared func(id string) bool) *Error {
	if ext := methods[method].Extension; ext != "" && !declared(ext) {
		return newError(CodeMethodNotFound, fmt.Sprintf("method not found: %q (the client did not declare the %s extension)", method, ext), nil)
	}
	return nil
}

// Cacheable reports whether method's 2026-07-28 result carries ttlMs and
// cacheScope.
func Cacheable(method string) bool { return methods[method].Cacheable }
