package wire

// MethodInfo is what the wire says about one method.
type MethodInfo struct {
	// Legacy and Modern say which eras have the method.
	Legacy, Modern bool
	// NameField is the params member the Mcp-Name header repeats ("" if none).
	NameField string
	// MRTR: the method may answer an input-required result and takes
	// inputResponses/requestState on its retry (2026-07-28).
	MRTR bool
	// Cacheable: its 2026-07-28 result carries ttlMs and cacheScope.
	Cacheable bool
	// Notification: it is sent without an id.
	Notification bool
	// ServerToClient: a request the server sends (2025) or an input request
	// kind (2026-07-28, inside an input-required result).
	ServerToClient bool
}

// methods is the table of client→server methods (and, marked ServerToClient,
// the server→client ones). It follows the 2026-07-28 schema and go-sdk v1.8.0
// (server.go: the methods removed in the new protocol).
var methods = map[string]MethodInfo{
	"initialize":                       {Legacy: true},
	"ping":                             {Legacy: true},
	"logging/setLevel":                 {Legacy: true},
	"resources/subscribe":              {Legacy: true},
	"resources/unsubscribe":            {Legacy: true},
	"notifications/initialized":        {Legacy: true, Notification: true},
	"notifications/roots/list_changed": {Legacy: true, Notification: true},

	"server/discover":          {Modern: true, Cacheable: true},
	"subscriptions/listen":     {Modern: true},
	"tools/list":               {Legacy: true, Modern: true, Cacheable: true},
	"prompts/list":             {Legacy: true, Modern: true, Cacheable: true},
	"resources/list":           {Legacy: true, Modern: true, Cacheable: true},
	"resources/templates/list": {Legacy: true, Modern: true, Cacheable: true},
	"resources/read":           {Legacy: true, Modern: true, Cacheable: true, MRTR: true, NameField: "uri"},
	"tools/call":               {Legacy: true, Modern: true, MRTR: true, NameField: "name"},
	"prompts/get":              {Legacy: true, Modern: true, MRTR: true, NameField: "name"},
	"completion/complete":      {Legacy: true, Modern: true},

	// Tasks: 2025-11-25 core, the io.modelcontextprotocol/tasks extension in
	// 2026-07-28 (where tasks/list and tasks/result are gone).
	"tasks/get":    {Legacy: true, Modern: true, NameField: "taskId"},
	"tasks/update": {Modern: true, NameField: "taskId"},
	"tasks/cancel": {Legacy: true, Modern: true, NameField: "taskId"},
	"tasks/list":   {Legacy: true},
	"tasks/result": {Legacy: true},

	"notifications/cancelled": {Legacy: true, Modern: true, Notification: true},
	"notifications/progress":  {Legacy: true, Notification: true},

	"sampling/createMessage": {Legacy: true, Modern: true, ServerToClient: true},
	"elicitation/create":     {Legacy: true, Modern: true, ServerToClient: true},
	"roots/list":             {Legacy: true, Modern: true, ServerToClient: true},
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
	if era == EraModern {
		return m.Modern
	}
	return m.Legacy
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

// Cacheable reports whether method's 2026-07-28 result carries ttlMs and
// cacheScope.
func Cacheable(method string) bool { return methods[method].Cacheable }
