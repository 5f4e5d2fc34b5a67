package main

import (
	"strings"
	"testing"

	"github.com/baton-mcp/baton/server"
)

func TestAuthorizeConfigFromEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	key := strings.Repeat("k", 32)
	if c, err := authorizeConfigFromEnv(env(nil)); c != nil || err != nil {
		t.Fatalf("unset: %v %v, want the tool off", c, err)
	}
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"BATON_OAUTH_ISSUER": "http://op/"}, "BATON_PUBLIC_URL"},
		{map[string]string{"BATON_OAUTH_ISSUER": "http://op/", "BATON_PUBLIC_URL": "http://app"}, "BATON_DEMO_USER_KEY"},
		{map[string]string{"BATON_OAUTH_ISSUER": "http://op/", "BATON_PUBLIC_URL": "http://app", "BATON_DEMO_USER_KEY": "short"}, "32 bytes"},
		{map[string]string{"BATON_OAUTH_ISSUER": "http://op/", "BATON_PUBLIC_URL": "http://app", "BATON_DEMO_USER_KEY": key, "BATON_URLFLOW_FALLBACK": "maybe"}, "want form or result"},
	} {
		if _, err := authorizeConfigFromEnv(env(tc.vars)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %q", tc.vars, err, tc.want)
		}
	}
	c, err := authorizeConfigFromEnv(env(map[string]string{"BATON_OAUTH_ISSUER": "http://op/", "BATON_PUBLIC_URL": "http://app/", "BATON_DEMO_USER_KEY": key,
		"BATON_URLFLOW_FALLBACK": "form", "BATON_URLFLOW_LEGACY_32042": "1"}))
	if err != nil || c.public != "http://app" || c.clientID != "baton" || c.fallback != server.URLFallbackForm || !c.legacy32042 {
		t.Fatalf("%+v %v", c, err)
	}
}
