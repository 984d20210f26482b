package wire

// LogLevels are MCP's logging levels (RFC 5424's), most verbose first:
// the values of logging/setLevel's level and of a 2026-07-28 envelope's
// logLevel.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LogRank is level's place in [LogLevels] (0 for debug), -1 for a level
// MCP does not define.
func LogRank(level string) int {
	for i, l := range LogLevels {
		if l == level {
			return i
		}
	}
	return -1
}

// MoreVerbose reports whether level a asks for more than level b: "" asks
// for nothing, and an unknown level is taken as info.
func MoreVerbose(a, b string) bool {
	if a == "" {
		return false
	}
	if b == "" {
		return true
	}
	return rankOrInfo(a) < rankOrInfo(b)
}

func rankOrInfo(level string) int {
	if r := LogRank(level); r >= 0 {
		return r
	}
	return 1
}
