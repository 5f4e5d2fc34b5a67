package main

import (
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestParsePrefixes(t *testing.T) {
	got, err := parsePrefixes(" 10.0.0.0/8, 127.0.0.1 ,,2001:db8::/32,192.168.1.7/24")
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, p := range got {
		s = append(s, p.String())
	}
	if want := []string{"10.0.0.0/8", "127.0.0.1/32", "2001:db8::/32", "192.168.1.0/24"}; !slices.Equal(s, want) {
		t.Errorf("parsePrefixes = %v, want %v", s, want)
	}
	if got, err := parsePrefixes(""); err != nil || got != nil {
		t.Errorf("parsePrefixes(\"\") = %v, %v; want none", got, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "not-an-address", "10.0.0.1/x"} {
		if _, err := parsePrefixes(bad); err == nil {
			t.Errorf("parsePrefixes(%q): no error", bad)
		}
	}
}

// -h lists the flags and every environment variable the command reads,
// with its meaning.
func TestUsageListsEnvironment(t *testing.T) {
	fs := flag.NewFlagSet("everything", flag.ContinueOnError)
	fs.String("addr", "127.0.0.1:8080", "HTTP listen address (HOST:PORT)")
	var b strings.Builder
	fs.Usage = func() { usage(&b, fs) }
	if err := fs.Parse([]string{"-h"}); err != flag.ErrHelp {
		t.Fatalf("-h: %v", err)
	}
	out := b.String()
	for _, want := range []string{"-addr", "Environment:", "BATON_STATE_KEY\n", "BATON_STATE_KEYS_OLD\n", "BATON_REDIS_URL\n", "at least 32 bytes", "rotation"} {
		if !strings.Contains(out, want) {
			t.Errorf("usage lacks %q:\n%s", want, out)
		}
	}
	// Every variable the command reads is listed.
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`"(BATON_[A-Z_]+)"`).FindAllStringSubmatch(string(src), -1) {
		if !strings.Contains(out, "  "+m[1]+"\n") {
			t.Errorf("main.go reads %s, which -h does not list", m[1])
		}
	}
}
