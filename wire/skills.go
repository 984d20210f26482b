package wire

import (
	"bytes"
	"encoding/json"
)

// The skills extension (SEP-2640, final 2026-09-13): a server serves
// Agent Skills as resources (conventionally skill://<skill-path>/<file>),
// enumerates them with skills/list, answers one by its SKILL.md URI with
// skills/get and, when it declares directoryRead, lists a directory's
// direct children with resources/directory/read. Shapes follow the SEP and
// @modelcontextprotocol/core 2.4.0 (ext/skills/schemas): an entry is
// {uri, frontmatter, resources: [{uri, digest, size}] | "dynamic"}; in
// 2026-07-28 the three results carry ttlMs and cacheScope (stamped by the
// server like any cacheable result). The methods exist in both eras for a
// client that declared the extension ([Negotiated]).
const (
	ExtensionSkills     = "io.modelcontextprotocol/skills"
	MethodSkillsList    = "skills/list"
	MethodSkillsGet     = "skills/get"
	MethodDirectoryRead = "resources/directory/read"
	// MimeDirectory is the mimeType of a directory resource.
	MimeDirectory = "inode/directory"
	// SkillScheme is the scheme the SEP recommends for skill resources.
	SkillScheme = "skill://"
)

// SkillsSettings is the extension's settings object in a server's
// capabilities.extensions.
type SkillsSettings struct {
	// DirectoryRead: the server serves resources/directory/read.
	DirectoryRead bool `json:"directoryRead,omitempty"`
}

// SkillsDeclared reports whether extensions (capabilities.extensions by
// id) declares the skills extension, and its settings. A declaration is
// an object ("{}" declares the extension with no optional features);
// anything else declares nothing.
func SkillsDeclared(extensions map[string]json.RawMessage) (SkillsSettings, bool) {
	if !DeclaresExtension(extensions, ExtensionSkills) {
		return SkillsSettings{}, false
	}
	var s SkillsSettings
	if json.Unmarshal(extensions[ExtensionSkills], &s) != nil {
		return SkillsSettings{}, false
	}
	return s, true
}

// An entry is {uri, frontmatter, resources}: resources is an array of
// {uri, digest, size}, or the string "dynamic" (a generated skill, no
// digests); the proxy renames the uris and keeps every other member.

// DirectoryEntry is one child in a resources/directory/read result: a
// file (its size when known) or a directory ([MimeDirectory]).
type DirectoryEntry struct {
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType,omitempty"`
	Size     *int64 `json:"size,omitempty"`
}

// Declares reports whether the client declared extension id
// ([DeclaresExtension]).
func (c Caps) Declares(id string) bool { return DeclaresExtension(c.Extensions, id) }

// DeclaresExtension is the one rule of what declares an extension, in
// either era: its member of capabilities.extensions (by id) is an object
// ("{}" declares it with no settings); null, true or a string declare
// nothing.
func DeclaresExtension(extensions map[string]json.RawMessage, id string) bool {
	v := bytes.TrimSpace(extensions[id])
	return len(v) > 0 && v[0] == '{'
}
