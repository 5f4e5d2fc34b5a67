package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// skillFS is a namespace of three skills: one at the top, one under a
// prefix with a skill nested in it.
func skillFS() fstest.MapFS {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"git-workflow/SKILL.md":                     file("---\nname: git-workflow\ndescription: Follow the team's Git conventions\nlicense: Apache-2.0\nmetadata:\n  version: \"1.2\"\n  reviewed: 2026-09-22\n---\n\n# Git workflow\n\nSee references/branching.md.\n"),
		"git-workflow/references/branching.md":      file("# Branching\n\nOne branch per issue.\n"),
		"git-workflow/scripts/check.sh":             file("#!/bin/sh\ngit status --porcelain\n"),
		"git-workflow/assets/logo.bin":              file("\x89PNG\x00\xff\xfe"),
		"acme/billing/refunds/SKILL.md":             file("---\r\nname: refunds\r\ndescription: Process refund requests\r\n---\r\nRefund within 30 days.\r\n"),
		"acme/billing/refunds/templates/email.md":   file("Dear customer,\n"),
		"acme/billing/refunds/chargebacks/SKILL.md": file("---\nname: chargebacks\ndescription: Answer a chargeback\n---\nBody.\n"),
		"acme/README.md":                            file("outside every skill: not served"),
		"git-workflow/.git/config":                  file("hidden: not served"),
		".drafts/unused/SKILL.md":                   file("---\nname: unused\ndescription: hidden\n---\n"),
		"acme/billing/refunds/.env":                 file("SECRET=1"),
	}
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

type skillEntryWire struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	} `json:"resources"`
}

func decodeSkills(t *testing.T, r *mcptest.Response) ([]skillEntryWire, map[string]json.RawMessage) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("skills/list: %d %s", r.Error.Code, r.Error.Message)
	}
	var w struct {
		Skills []skillEntryWire `json:"skills"`
	}
	if err := json.Unmarshal(r.Result, &w); err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(r.Result, &all)
	return w.Skills, all
}

func TestSkillsServed(t *testing.T) {
	fsys := skillFS()
	s := newTestServer(t, nil)
	if err := s.AddSkills(fsys); err != nil {
		t.Fatal(err)
	}
	// A client that declares nothing is served: the extension has no
	// client side.
	c := newClient(t, s, "")
	disc := wantResult(t, send(t, c, "server/discover", map[string]any{}))
	caps := disc["capabilities"].(map[string]any)
	if got, _ := json.Marshal(caps["extensions"].(map[string]any)[SkillsExtension]); string(got) != `{"directoryRead":true}` {
		t.Errorf("discover: skills settings = %s", got)
	}
	if caps["resources"] == nil {
		t.Error("discover: no resources capability beside the skills extension")
	}

	skills, all := decodeSkills(t, send(t, c, "skills/list", map[string]any{}))
	if string(all["resultType"]) != `"complete"` || all["ttlMs"] == nil || all["cacheScope"] == nil || all["nextCursor"] != nil {
		t.Errorf("skills/list envelope: %s", send(t, c, "skills/list", map[string]any{}).Result)
	}
	var uris []string
	for _, sk := range skills {
		uris = append(uris, sk.URI)
	}
	want := []string{"skill://acme/billing/refunds/SKILL.md", "skill://acme/billing/refunds/chargebacks/SKILL.md", "skill://git-workflow/SKILL.md"}
	if !reflect.DeepEqual(uris, want) {
		t.Fatalf("skills = %v, want %v", uris, want)
	}
	// The frontmatter, as JSON, verbatim: the date stays the string
	// written, the quoted version a string.
	var fm map[string]any
	if err := json.Unmarshal(skills[2].Frontmatter, &fm); err != nil {
		t.Fatal(err)
	}
	wantFM := map[string]any{"name": "git-workflow", "description": "Follow the team's Git conventions", "license": "Apache-2.0",
		"metadata": map[string]any{"version": "1.2", "reviewed": "2026-09-22"}}
	if !reflect.DeepEqual(fm, wantFM) {
		t.Errorf("frontmatter = %s", skills[2].Frontmatter)
	}
	// Every file, SKILL.md first, each with the digest and size of what
	// resources/read serves; the enclosing skill lists the nested one's
	// files; hidden files and files outside skills are not there.
	wantFiles := map[string][]string{
		want[0]: {"acme/billing/refunds/SKILL.md", "acme/billing/refunds/chargebacks/SKILL.md", "acme/billing/refunds/templates/email.md"},
		want[1]: {"acme/billing/refunds/chargebacks/SKILL.md"},
		want[2]: {"git-workflow/SKILL.md", "git-workflow/assets/logo.bin", "git-workflow/references/branching.md", "git-workflow/scripts/check.sh"},
	}
	for _, sk := range skills {
		var got []string
		for _, r := range sk.Resources {
			p := strings.TrimPrefix(r.URI, "skill://")
			got = append(got, p)
			data := fsys[p].Data
			if r.Digest != digest(data) || r.Size != len(data) {
				t.Errorf("%s: %s digest %s size %d, want %s %d", sk.URI, r.URI, r.Digest, r.Size, digest(data), len(data))
			}
			read := wantResult(t, send(t, c, "resources/read", map[string]any{"uri": r.URI}))
			content := read["contents"].([]any)[0].(map[string]any)
			var served []byte
			if text, ok := content["text"].(string); ok {
				served = []byte(text)
			} else {
				served, _ = base64.StdEncoding.DecodeString(content["blob"].(string))
			}
			if !bytes.Equal(served, data) {
				t.Errorf("resources/read %s = %q, want %q", r.URI, served, data)
			}
		}
		if !reflect.DeepEqual(got, wantFiles[sk.URI]) {
			t.Errorf("%s files = %v, want %v", sk.URI, got, wantFiles[sk.URI])
		}
	}
	for _, p := range []string{"skill://acme/README.md", "skill://git-workflow/.git/config", "skill://acme/billing/refunds/.env"} {
		wantError(t, send(t, c, "resources/read", map[string]any{"uri": p}), http.StatusBadRequest, mcp.InvalidParams)
	}

	// resources/list: each SKILL.md, named and described by its
	// frontmatter; supporting files are readable but not listed.
	list := wantResult(t, send(t, c, "resources/list", map[string]any{}))
	var listed []string
	for _, r := range list["resources"].([]any) {
		m := r.(map[string]any)
		listed = append(listed, m["uri"].(string))
		if m["uri"] == want[2] && (m["name"] != "git-workflow" || m["description"] != "Follow the team's Git conventions" || m["mimeType"] != "text/markdown") {
			t.Errorf("resources/list entry %v", m)
		}
	}
	if !reflect.DeepEqual(listed, want) {
		t.Errorf("resources/list = %v, want the SKILL.md files %v", listed, want)
	}

	// skills/get: the listing's entry, with the read cache hint and no
	// cursor; an unknown URI (or a file that is not a SKILL.md) is -32602.
	for _, sk := range skills {
		got := wantResult(t, send(t, c, "skills/get", map[string]any{"uri": sk.URI}))
		var listedEntry any
		b, _ := json.Marshal(sk)
		_ = json.Unmarshal(b, &listedEntry)
		if !reflect.DeepEqual(got["skill"], listedEntry) {
			t.Errorf("skills/get %s = %v, want %s", sk.URI, got["skill"], b)
		}
		if got["ttlMs"] == nil || got["cacheScope"] != "public" || got["nextCursor"] != nil {
			t.Errorf("skills/get %s envelope %v", sk.URI, got)
		}
	}
	for _, uri := range []string{"skill://nope/SKILL.md", "skill://git-workflow/references/branching.md", "skill://git-workflow"} {
		e := wantError(t, send(t, c, "skills/get", map[string]any{"uri": uri}), http.StatusBadRequest, mcp.InvalidParams)
		if e.Message != "No skill is served at "+uri {
			t.Errorf("skills/get %s: %q", uri, e.Message)
		}
	}
	wantError(t, send(t, c, "skills/get", map[string]any{}), http.StatusBadRequest, mcp.InvalidParams)

	// resources/directory/read: every level of the namespace.
	for dir, children := range map[string][]string{
		"skill://git-workflow":                     {"SKILL.md text/markdown", "assets inode/directory", "references inode/directory", "scripts inode/directory"},
		"skill://git-workflow/scripts":             {"check.sh text/x-shellscript"},
		"skill://acme":                             {"billing inode/directory"},
		"skill://acme/billing":                     {"refunds inode/directory"},
		"skill://acme/billing/refunds":             {"SKILL.md text/markdown", "chargebacks inode/directory", "templates inode/directory"},
		"skill://git-workflow/assets":              {"logo.bin application/octet-stream"},
		"skill://acme/billing/refunds/chargebacks": {"SKILL.md text/markdown"},
	} {
		got := wantResult(t, send(t, c, "resources/directory/read", map[string]any{"uri": dir}))
		var names []string
		for _, r := range got["resources"].([]any) {
			m := r.(map[string]any)
			names = append(names, fmt.Sprint(m["name"], " ", m["mimeType"]))
			if m["uri"] != dir+"/"+m["name"].(string) {
				t.Errorf("%s: child %v", dir, m)
			}
		}
		if !reflect.DeepEqual(names, children) || got["resultType"] != "complete" {
			t.Errorf("directory %s = %v (%v), want %v", dir, names, got["resultType"], children)
		}
	}
	for _, uri := range []string{"skill://git-workflow/SKILL.md", "skill://git-workflow/", "skill://nope", "skill://acme/README.md", "skill://git-workflow/.git"} {
		e := wantError(t, send(t, c, "resources/directory/read", map[string]any{"uri": uri}), http.StatusBadRequest, mcp.InvalidParams)
		if e.Message != uri+" is not a directory resource" {
			t.Errorf("directory read %s: %q", uri, e.Message)
		}
	}
}

// Pages of one: the cursor walks every entry once, for skills/list and
// resources/directory/read alike.
func TestSkillsPaged(t *testing.T) {
	s := newTestServer(t, &Options{PageSize: 1})
	if err := s.AddSkills(skillFS()); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s, "")
	for _, tc := range []struct {
		method, uri, member string
		want                int
	}{{"skills/list", "", "skills", 3}, {"resources/directory/read", "skill://git-workflow", "resources", 4}} {
		var (
			seen   []string
			cursor string
		)
		for range 10 {
			p := map[string]any{}
			if tc.uri != "" {
				p["uri"] = tc.uri
			}
			if cursor != "" {
				p["cursor"] = cursor
			}
			got := wantResult(t, send(t, c, tc.method, p))
			for _, e := range got[tc.member].([]any) {
				seen = append(seen, e.(map[string]any)["uri"].(string))
			}
			cursor, _ = got["nextCursor"].(string)
			if cursor == "" {
				break
			}
		}
		if len(seen) != tc.want {
			t.Errorf("%s: %d entries over the pages (%v), want %d", tc.method, len(seen), seen, tc.want)
		}
	}
	wantError(t, send(t, c, "skills/list", map[string]any{"cursor": "!!"}), http.StatusBadRequest, mcp.InvalidParams)
}

// A SKILL.md at the root of the file system makes it one skill, at the
// path of its name.
func TestSkillAtRoot(t *testing.T) {
	s := newTestServer(t, nil)
	err := s.AddSkills(fstest.MapFS{
		"SKILL.md":          {Data: []byte("---\nname: pdf-processing\ndescription: Work with PDFs\n---\n")},
		"forms/FORMS.md":    {Data: []byte("forms")},
		"nested/SKILL.md":   {Data: []byte("---\nname: nested\ndescription: inner\n---\n")},
		"nested/a b/c%d.md": {Data: []byte("escaped")},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s, "")
	skills, _ := decodeSkills(t, send(t, c, "skills/list", map[string]any{}))
	if len(skills) != 2 || skills[0].URI != "skill://pdf-processing/SKILL.md" || skills[1].URI != "skill://pdf-processing/nested/SKILL.md" {
		t.Fatalf("skills = %+v", skills)
	}
	if got := skills[1].Resources[1].URI; got != "skill://pdf-processing/nested/a%20b/c%25d.md" {
		t.Errorf("escaped file URI = %s", got)
	}
	read := wantResult(t, send(t, c, "resources/read", map[string]any{"uri": "skill://pdf-processing/nested/a%20b/c%25d.md"}))
	if read["contents"].([]any)[0].(map[string]any)["text"] != "escaped" {
		t.Errorf("read = %v", read)
	}
	dir := wantResult(t, send(t, c, "resources/directory/read", map[string]any{"uri": "skill://pdf-processing/nested"}))
	if got, _ := json.Marshal(dir["resources"]); !strings.Contains(string(got), `{"mimeType":"inode/directory","name":"a b","uri":"skill://pdf-processing/nested/a%20b"}`) {
		t.Errorf("directory = %s", got)
	}
}

func TestAddSkillsRefuses(t *testing.T) {
	md := func(name string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: d\n---\n")}
	}
	many := fstest.MapFS{"big/SKILL.md": md("big")}
	for i := range maxSkillFiles {
		many[fmt.Sprintf("big/f%03d.txt", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	for name, tc := range map[string]struct {
		fsys fstest.MapFS
		want string
	}{
		"empty":           {fstest.MapFS{"a/README.md": {Data: []byte("x")}}, "no SKILL.md"},
		"name rule":       {fstest.MapFS{"Bad/SKILL.md": md("Bad")}, "naming rule"},
		"double hyphen":   {fstest.MapFS{"a--b/SKILL.md": md("a--b")}, "naming rule"},
		"directory":       {fstest.MapFS{"one/SKILL.md": md("two")}, "differs from its directory's name"},
		"no frontmatter":  {fstest.MapFS{"one/SKILL.md": {Data: []byte("# one\n")}}, "one/SKILL.md"},
		"no description":  {fstest.MapFS{"one/SKILL.md": {Data: []byte("---\nname: one\n---\n")}}, "description"},
		"files":           {many, "513 files"},
		"bytes":           {fstest.MapFS{"big/SKILL.md": md("big"), "big/blob": {Data: make([]byte, maxSkillBytes)}}, "16 MiB"},
		"authority":       {fstest.MapFS{"a:b/one/SKILL.md": md("one")}, "reg-name"},
		"nested mismatch": {fstest.MapFS{"one/SKILL.md": md("one"), "one/x/SKILL.md": md("y")}, "differs"},
		"alias bomb":      {fstest.MapFS{"one/SKILL.md": {Data: []byte("---\nname: one\ndescription: d\na: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n---\n")}}, "one/SKILL.md"},
	} {
		s := newTestServer(t, nil)
		err := s.AddSkills(tc.fsys)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %q", name, err, tc.want)
		}
		if s.advertised(false)[SkillsExtension] != nil && s.skills.list == nil {
			t.Errorf("%s: a refused registration left the extension advertised with no skill", name)
		}
	}
	if err := newTestServer(t, nil).AddSkills(nil); err == nil {
		t.Error("AddSkills(nil) accepted")
	}

	// A first call refused for a URI already served advertises nothing.
	first := newTestServer(t, nil)
	h0 := func(context.Context, *ResourceRequest) (*ResourceResult, error) { return &ResourceResult{}, nil }
	if err := first.AddResource(Resource{URI: "skill://git-workflow/SKILL.md", Name: "taken"}, h0); err != nil {
		t.Fatal(err)
	}
	if err := first.AddSkills(fstest.MapFS{"git-workflow/SKILL.md": md("git-workflow")}); err == nil || first.advertised(false)[SkillsExtension] != nil {
		t.Errorf("AddSkills over a served URI: %v; extension advertised: %s", err, first.advertised(false)[SkillsExtension])
	}

	// A URI served twice; the files of a skill are not replaced or
	// removed as plain resources.
	s := newTestServer(t, nil)
	if err := s.AddSkills(skillFS()); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSkills(fstest.MapFS{"git-workflow/SKILL.md": md("git-workflow")}); err == nil || !strings.Contains(err.Error(), "already served") {
		t.Errorf("the same skill again: %v", err)
	}
	h := func(context.Context, *ResourceRequest) (*ResourceResult, error) { return &ResourceResult{}, nil }
	if err := s.AddResource(Resource{URI: "skill://git-workflow/SKILL.md", Name: "x"}, h); err == nil {
		t.Error("AddResource replaced a skill's SKILL.md")
	}
	if s.RemoveResource("skill://git-workflow/scripts/check.sh") {
		t.Error("RemoveResource removed a skill's file")
	}
	// A second file system adds to the namespace: prefix directories are
	// shared.
	if err := s.AddSkills(fstest.MapFS{"acme/support/triage/SKILL.md": md("triage")}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s, "")
	dir := wantResult(t, send(t, c, "resources/directory/read", map[string]any{"uri": "skill://acme"}))
	if n := len(dir["resources"].([]any)); n != 2 {
		t.Errorf("skill://acme after a second AddSkills: %v", dir["resources"])
	}
}

// Per-caller filtering: scopes and Options.Visible hide a skill from
// every method, and the listings say they are private.
func TestSkillsVisibility(t *testing.T) {
	s := newTestServer(t, &Options{Visible: func(ctx context.Context, it Item) bool {
		return !(it.Kind == ItemSkill && it.Name == "skill://git-workflow/SKILL.md" && PrincipalFromContext(ctx) == "guest")
	}})
	if err := s.AddSkills(fstest.MapFS{
		"git-workflow/SKILL.md":      {Data: []byte("---\nname: git-workflow\ndescription: d\n---\n")},
		"git-workflow/ref/branch.md": {Data: []byte("b")},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSkills(fstest.MapFS{"ops/deploy/SKILL.md": {Data: []byte("---\nname: deploy\ndescription: d\n---\n")}}, RequireScopes("ops")); err != nil {
		t.Fatal(err)
	}
	h := grantFromHeader(s)
	c := newClient(t, h, "")
	as := func(sub, scopes string) []mcptest.CallOption {
		return []mcptest.CallOption{mcptest.WithHeader("X-Test-Sub", sub), mcptest.WithHeader("X-Test-Scopes", scopes)}
	}
	uris := func(o []mcptest.CallOption) (list []string, scope any) {
		got := wantResult(t, send(t, c, "skills/list", map[string]any{}, o...))
		for _, e := range got["skills"].([]any) {
			list = append(list, e.(map[string]any)["uri"].(string))
		}
		return list, got["cacheScope"]
	}
	for _, tc := range []struct {
		sub, scopes string
		want        []string
	}{
		{"alice", "ops", []string{"skill://git-workflow/SKILL.md", "skill://ops/deploy/SKILL.md"}},
		{"bob", "", []string{"skill://git-workflow/SKILL.md"}},
		{"guest", "ops", []string{"skill://ops/deploy/SKILL.md"}},
	} {
		o := as(tc.sub, tc.scopes)
		got, scope := uris(o)
		if !reflect.DeepEqual(got, tc.want) || scope != "private" {
			t.Errorf("%s: skills/list = %v (%v), want %v (private)", tc.sub, got, scope, tc.want)
		}
		res := wantResult(t, send(t, c, "resources/list", map[string]any{}, o...))
		if n := len(res["resources"].([]any)); n != len(tc.want) {
			t.Errorf("%s: resources/list has %d entries, want %d", tc.sub, n, len(tc.want))
		}
		for _, uri := range []string{"skill://git-workflow/SKILL.md", "skill://ops/deploy/SKILL.md"} {
			seen := strings.Contains(strings.Join(tc.want, " "), uri)
			r := send(t, c, "skills/get", map[string]any{"uri": uri}, o...)
			if (r.Error == nil) != seen {
				t.Errorf("%s: skills/get %s: %s", tc.sub, uri, r.Body)
			}
			dir := strings.TrimSuffix(uri, "/SKILL.md")
			if r := send(t, c, "resources/directory/read", map[string]any{"uri": dir}, o...); (r.Error == nil) != seen {
				t.Errorf("%s: directory %s: %s", tc.sub, dir, r.Body)
			}
		}
		// The prefix directory shows only what is under it and visible.
		if r := send(t, c, "resources/directory/read", map[string]any{"uri": "skill://ops"}, o...); (r.Error == nil) != strings.Contains(tc.scopes, "ops") {
			t.Errorf("%s: directory skill://ops: %s", tc.sub, r.Body)
		}
	}
	// A supporting file is governed by its skill: hidden from guest as
	// unknown, refused to a caller without the scope with a challenge.
	wantErrorID(t, send(t, c, "resources/read", map[string]any{"uri": "skill://git-workflow/ref/branch.md"}, as("guest", "ops")...), http.StatusBadRequest, mcp.InvalidParams, "")
	if r := send(t, c, "resources/read", map[string]any{"uri": "skill://ops/deploy/SKILL.md"}, as("bob", "")...); r.Status != http.StatusForbidden || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="ops"`) {
		t.Errorf("bob reads a skill that needs ops: HTTP %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
}
