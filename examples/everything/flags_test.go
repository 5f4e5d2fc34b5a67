package main

import (
	"slices"
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
