// Package loglevel holds the eight syslog severities of MCP's log
// notifications, and their mapping from slog levels.
package loglevel

import "log/slog"

// names are the wire levels, least severe first.
var names = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// rank returns the position of a wire level in names, or -1.
func rank(s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	return -1
}

// Valid reports whether s is one of the eight wire levels.
func Valid(s string) bool { return rank(s) >= 0 }

// Enables reports whether a message at wire level m passes the threshold
// t; an unknown level on either side passes nothing.
func Enables(t, m string) bool {
	tr, mr := rank(t), rank(m)
	return tr >= 0 && mr >= 0 && mr >= tr
}

// FromSlog names the wire level of l: below Info is debug, Info up to
// Info+1 is info, Info+2 up to Warn-1 is notice, Warn up to Error-1 is
// warning, Error up to Error+3 is error, Error+4 up to Error+7 critical,
// Error+8 up to Error+11 alert, Error+12 and above emergency.
func FromSlog(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelInfo+2:
		return "info"
	case l < slog.LevelWarn:
		return "notice"
	case l < slog.LevelError:
		return "warning"
	case l < slog.LevelError+4:
		return "error"
	case l < slog.LevelError+8:
		return "critical"
	case l < slog.LevelError+12:
		return "alert"
	}
	return "emergency"
}
