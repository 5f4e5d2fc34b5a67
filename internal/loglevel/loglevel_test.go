package loglevel

import (
	"log/slog"
	"testing"
)

func TestFromSlog(t *testing.T) {
	for _, c := range []struct {
		l    slog.Level
		want string
	}{
		{slog.LevelDebug, "debug"}, {slog.LevelInfo - 1, "debug"},
		{slog.LevelInfo, "info"}, {slog.LevelInfo + 1, "info"},
		{slog.LevelInfo + 2, "notice"}, {slog.LevelWarn - 1, "notice"},
		{slog.LevelWarn, "warning"}, {slog.LevelError - 1, "warning"},
		{slog.LevelError, "error"}, {slog.LevelError + 3, "error"},
		{slog.LevelError + 4, "critical"}, {slog.LevelError + 8, "alert"},
		{slog.LevelError + 12, "emergency"}, {slog.LevelError + 100, "emergency"},
	} {
		if got := FromSlog(c.l); got != c.want {
			t.Errorf("FromSlog(%v) = %q, want %q", c.l, got, c.want)
		}
	}
}

func TestEnables(t *testing.T) {
	for _, c := range []struct {
		t, m string
		want bool
	}{
		{"info", "info", true}, {"info", "debug", false}, {"info", "emergency", true},
		{"emergency", "alert", false}, {"debug", "debug", true},
		{"", "info", false}, {"info", "loud", false}, {"Info", "error", false},
	} {
		if got := Enables(c.t, c.m); got != c.want {
			t.Errorf("Enables(%q, %q) = %v, want %v", c.t, c.m, got, c.want)
		}
	}
	for _, n := range names {
		if !Valid(n) {
			t.Errorf("Valid(%q) = false", n)
		}
	}
	if Valid("") || Valid("warn") {
		t.Error("Valid accepts a name that is not a wire level")
	}
}
