package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestSkillsTypeScriptClient reads the example's skills with the official
// TypeScript SDK's client (testdata/skills-client.mjs): every file's size
// and digest verified against its entry, skills/get equal to the listing,
// the directory tree walked, and the two -32602 refusals.
func TestSkillsTypeScriptClient(t *testing.T) {
	node, dir := typeScriptSDK(t)
	script, err := filepath.Abs(filepath.Join("testdata", "skills-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	srv := exampleServer(t, testKey)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	stdout, runErr := runNode(t, 60*time.Second, node, dir, script, ts.URL)
	var res struct {
		Error    string          `json:"error"`
		Settings json.RawMessage `json:"settings"`
		Skills   []struct {
			URI         string         `json:"uri"`
			Frontmatter map[string]any `json:"frontmatter"`
			Files       []string       `json:"files"`
			Verified    int            `json:"verified"`
			GetMatches  bool           `json:"getMatches"`
		} `json:"skills"`
		Directories      map[string][]string `json:"directories"`
		UnknownSkillCode int                 `json:"unknownSkillCode"`
		NotDirectoryCode int                 `json:"notDirectoryCode"`
		SDKVersion       string              `json:"sdkVersion"`
		ProtocolVersion  string              `json:"protocolVersion"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout), &res); err != nil {
		t.Fatalf("client (%v) printed no JSON result: %v\nstdout: %s", runErr, err, stdout)
	}
	if res.Error != "" || runErr != nil {
		t.Fatalf("client failed (%v): %s", runErr, res.Error)
	}
	t.Logf("TypeScript SDK %s (protocol %s): %d skill(s), %v", res.SDKVersion, res.ProtocolVersion, len(res.Skills), res.Directories)
	if string(res.Settings) != `{"directoryRead":true}` {
		t.Errorf("settings = %s", res.Settings)
	}
	wantFiles := []string{"skill://onboarding/SKILL.md", "skill://onboarding/references/checklist.md"}
	if len(res.Skills) != 1 || res.Skills[0].URI != wantFiles[0] || !reflect.DeepEqual(res.Skills[0].Files, wantFiles) {
		t.Fatalf("skills = %+v, want onboarding with %v", res.Skills, wantFiles)
	}
	sk := res.Skills[0]
	if sk.Verified != len(wantFiles) || !sk.GetMatches {
		t.Errorf("verified %d of %d files; skills/get matches the listing: %v", sk.Verified, len(wantFiles), sk.GetMatches)
	}
	if sk.Frontmatter["name"] != "onboarding" || sk.Frontmatter["license"] != "Apache-2.0" ||
		!reflect.DeepEqual(sk.Frontmatter["metadata"], map[string]any{"author": "baton-mcp", "version": "1.0"}) {
		t.Errorf("frontmatter = %v", sk.Frontmatter)
	}
	wantDirs := map[string][]string{
		"skill://onboarding":            {"skill://onboarding/SKILL.md", "skill://onboarding/references"},
		"skill://onboarding/references": {"skill://onboarding/references/checklist.md"},
	}
	if !reflect.DeepEqual(res.Directories, wantDirs) {
		t.Errorf("directories = %v, want %v", res.Directories, wantDirs)
	}
	if res.UnknownSkillCode != -32602 || res.NotDirectoryCode != -32602 {
		t.Errorf("unknown skill: %d, not a directory: %d; want -32602 for both", res.UnknownSkillCode, res.NotDirectoryCode)
	}
}
