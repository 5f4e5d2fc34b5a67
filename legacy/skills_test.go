package legacy_test

import (
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// Skills are served in 2025-11-25 sessions too: advertised in initialize,
// the three methods answered without the 2026-07-28 cache hints or
// resultType, and the files read as resources.
func TestSkillsInLegacySessions(t *testing.T) {
	srv := newServer(t)
	if err := srv.AddSkills(fstest.MapFS{
		"review/SKILL.md":        {Data: []byte("---\nname: review\ndescription: Review a change\n---\nRead guide/steps.md.\n")},
		"review/guide/steps.md":  {Data: []byte("1. Read it.\n")},
		"review/guide/extra.txt": {Data: []byte("more")},
	}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, srv)
	c, err := mcptest.New(mcptest.URL(f.ts.URL, nil), &mcptest.Options{Protocol: mcp.LegacyProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	init, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ext map[string]json.RawMessage
	if err := json.Unmarshal(init.Capabilities["extensions"], &ext); err != nil || string(ext[server.SkillsExtension]) != `{"directoryRead":true}` {
		t.Errorf("initialize extensions = %s (%v)", init.Capabilities["extensions"], err)
	}
	result := func(method string, params any) map[string]any {
		t.Helper()
		r, err := c.Do(ctx, method, params)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if r.Error != nil {
			t.Fatalf("%s: %d %s", method, r.Error.Code, r.Error.Message)
		}
		var m map[string]any
		if err := json.Unmarshal(r.Result, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
			if _, ok := m[k]; ok {
				t.Errorf("%s: a 2025-11-25 result carries %s: %s", method, k, r.Result)
			}
		}
		return m
	}
	list := result("skills/list", nil)
	skills := list["skills"].([]any)
	if len(skills) != 1 || skills[0].(map[string]any)["uri"] != "skill://review/SKILL.md" {
		t.Fatalf("skills/list = %v", list)
	}
	if n := len(skills[0].(map[string]any)["resources"].([]any)); n != 3 {
		t.Errorf("the entry lists %d files, want 3", n)
	}
	got := result("skills/get", map[string]any{"uri": "skill://review/SKILL.md"})
	if got["skill"].(map[string]any)["frontmatter"].(map[string]any)["description"] != "Review a change" {
		t.Errorf("skills/get = %v", got)
	}
	dir := result("resources/directory/read", map[string]any{"uri": "skill://review/guide"})
	if n := len(dir["resources"].([]any)); n != 2 {
		t.Errorf("directory = %v", dir)
	}
	read, err := c.ReadResource(ctx, "skill://review/guide/steps.md")
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "1. Read it.\n" {
		t.Errorf("resources/read = %+v, %v", read, err)
	}
	r, err := c.Do(ctx, "skills/get", map[string]any{"uri": "skill://other/SKILL.md"})
	if err != nil || r.Error == nil || r.Error.Code != mcp.InvalidParams {
		t.Errorf("skills/get of an unknown skill: %+v, %v", r, err)
	}
}
