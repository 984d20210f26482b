package config

// Threshold returns the token threshold at or above which an output of tool
// is diverted to disk. Among the patterns of the server's scratchpad table
// that match tool, the longest (by source text) wins, so "list_pods" beats
// "list_*" beats "*"; on equal length the smallest MinTokens wins, so
// overlapping patterns err towards protecting the context. A pattern with
// {a,b} alternates counts with the alternate that matched:
// "{get,list}_pods" is as long as "list_pods" for list_pods. ok is false
// when no pattern matches: that tool is never intercepted. Patterns match
// the upstream's tool name, not the prefixed exposed name.
func (s *Server) Threshold(tool string) (minTokens int, ok bool) {
	bestLen := -1
	for i := range s.Thresholds {
		t := &s.Thresholds[i]
		l := t.Pattern.matchLen(tool)
		if l < 0 {
			continue
		}
		if l > bestLen || (l == bestLen && t.MinTokens < minTokens) {
			bestLen, minTokens = l, t.MinTokens
		}
	}
	return minTokens, bestLen >= 0
}

// AppDataBytes is the most bytes of structuredContent a diverted result
// of one of this server's MCP Apps tools keeps for its page; 0 for none.
func (s *Server) AppDataBytes() int {
	switch {
	case s.MaxAppDataBytes == 0:
		return DefaultMaxAppDataBytes
	case s.MaxAppDataBytes < 0:
		return 0
	}
	return int(min(s.MaxAppDataBytes, 1<<40))
}

// Allowed reports whether mcp_filter lets tool through: always when no
// filter was configured, never when it is an empty list, otherwise when one
// of its patterns matches the upstream tool name.
func (s *Server) Allowed(tool string) bool {
	if !s.FilterSet {
		return true
	}
	for i := range s.Filter {
		if s.Filter[i].Match(tool) {
			return true
		}
	}
	return false
}

// ExposedName is the name the proxy lists tool under: Prefix + "__" + tool
// when the server has a prefix, tool otherwise.
func (s *Server) ExposedName(tool string) string {
	if s.Prefix == "" {
		return tool
	}
	return s.Prefix + "__" + tool
}

// Server returns the server named name, or nil.
func (c *Config) Server(name string) *Server {
	for i := range c.Servers {
		if c.Servers[i].Name == name {
			return &c.Servers[i]
		}
	}
	return nil
}
