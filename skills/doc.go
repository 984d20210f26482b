// Package skills holds what scratchpad-mcp knows of the skills extension
// (SEP-2640, io.modelcontextprotocol/skills) beyond its wire shapes (those
// are in package wire): how an upstream's skill URIs are kept apart from
// every other server's ([Expose], [Route]), and the server's own skill
// ([Own]), which teaches an agent the scratchpad's way of working.
//
// Names. Skills are resources, so they are kept apart the way the SEP
// allows without breaking a skill: the upstream's name becomes the first
// segment of the skill path, an organizational prefix. Upstream "docs"
// serving skill://git-workflow/SKILL.md is exposed as
// skill://docs/git-workflow/SKILL.md: the last segment is still the
// skill's name (the SEP requires it to equal frontmatter.name), the file
// bytes and their digests are the upstream's, and relative references
// inside a skill resolve as before. A skill under another scheme
// (github://…) is exposed as "<server>+<uri>", the form the catalogue
// already gives a colliding resource. The first segment OwnNamespace is
// the server's own; an upstream of that name has its skills hidden.
package skills
