package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

func reviewMD(name string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: d\n---\n")}
}

// A skill nested in a skill of another AddSkills call: the enclosing
// skill's entry must list the nested skill's files (the specification's
// completeness rule), or the second call must be refused. Either order.
func TestReviewSkillsNestedAcrossCalls(t *testing.T) {
	outer := fstest.MapFS{"a/SKILL.md": reviewMD("a"), "a/x.txt": {Data: []byte("x")}}
	inner := fstest.MapFS{"a/sub/b/SKILL.md": reviewMD("b"), "a/sub/b/y.txt": {Data: []byte("y")}}
	for name, calls := range map[string][2]fstest.MapFS{"outer first": {outer, inner}, "inner first": {inner, outer}} {
		t.Run(name, func(t *testing.T) {
			s := newTestServer(t, nil)
			if err := s.AddSkills(calls[0]); err != nil {
				t.Fatal(err)
			}
			if err := s.AddSkills(calls[1]); err != nil {
				return // refused: fine
			}
			c := newClient(t, s, "")
			got := wantResult(t, send(t, c, "skills/get", map[string]any{"uri": "skill://a/SKILL.md"}))
			var uris []string
			for _, r := range got["skill"].(map[string]any)["resources"].([]any) {
				uris = append(uris, r.(map[string]any)["uri"].(string))
			}
			for _, want := range []string{"skill://a/sub/b/SKILL.md", "skill://a/sub/b/y.txt"} {
				if !slices.Contains(uris, want) {
					t.Errorf("skill a's entry %v lacks %s, a file of the skill nested in it", uris, want)
				}
			}
		})
	}
}

// A caller who may see no skill (and so no resource) must not be told
// the server has the Skills extension: the specification requires the
// resources capability beside it, and the extension's presence tells
// the caller that skills exist.
func TestReviewSkillsDiscoverHidesExtension(t *testing.T) {
	s := newTestServer(t, nil)
	if err := s.AddSkills(fstest.MapFS{"ops/deploy/SKILL.md": reviewMD("deploy")}, RequireScopes("ops")); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, grantFromHeader(s), "")
	caps := wantResult(t, send(t, c, "server/discover", map[string]any{}))["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if ext[SkillsExtension] != nil && caps["resources"] == nil {
		t.Errorf("discover advertises %s without the resources capability: %v", SkillsExtension, caps)
	}
	if ext[SkillsExtension] != nil {
		t.Errorf("discover tells a caller who can see no skill that skills are served: %v", caps)
	}
	// One who has the scope sees both.
	caps = wantResult(t, send(t, c, "server/discover", map[string]any{}, reviewAs("alice", "ops")...))["capabilities"].(map[string]any)
	if ext, _ := caps["extensions"].(map[string]any); ext[SkillsExtension] == nil || caps["resources"] == nil {
		t.Errorf("discover with the scope: %v", caps)
	}
}

// A hidden skill's file is answered exactly as an unknown URI is: the
// same error, status and the request's id (not null, which only the
// refusal from the headers has, and which tells hidden from unknown).
func TestReviewSkillsHiddenReadLikeUnknown(t *testing.T) {
	s := newTestServer(t, &Options{Visible: func(ctx context.Context, it Item) bool { return it.Kind != ItemSkill }})
	if err := s.AddSkills(fstest.MapFS{"sec/SKILL.md": reviewMD("sec"), "sec/a.md": {Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s, "")
	for _, uri := range []string{"skill://sec/a.md", "skill://sec/SKILL.md", "skill://sec/unknown.md"} {
		r := send(t, c, "resources/read", map[string]any{"uri": uri})
		wantError(t, r, http.StatusBadRequest, mcp.InvalidParams)
		if r.Error != nil && !strings.HasPrefix(r.Error.Message, "Resource not found") {
			t.Errorf("%s: %s", uri, r.Error.Message)
		}
	}
}

func reviewAs(sub, scopes string) []mcptest.CallOption {
	return []mcptest.CallOption{mcptest.WithHeader("X-Test-Sub", sub), mcptest.WithHeader("X-Test-Scopes", scopes)}
}
