package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"mime"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/skillmd"
	"github.com/baton-mcp/baton/mcp"
)

// Skills (SEP-2640, the io.modelcontextprotocol/skills extension).
//
// A skill is a directory holding a SKILL.md (YAML frontmatter with at
// least name and description, then markdown) and any supporting files.
// AddSkills serves every skill of an fs.FS: each file is a resource,
// skill://<skill-path>/<file-path>, read with resources/read; the SKILL.md
// of each skill is listed in resources/list (name and description from
// its frontmatter, text/markdown), its supporting files are readable but
// not listed. The extension's three methods are served to clients of both
// eras, which need not declare the extension (the specification defines
// no client side):
//
//   - skills/list: each skill's entry (its SKILL.md URI, its frontmatter as
//     JSON, and every file of it with a sha256 digest and size), paged
//     like the core lists, with the list cache hint (Options.ListCache);
//   - skills/get: one entry by its SKILL.md URI, with the read cache hint
//     (Options.ReadCache); a URI that names no skill the caller may see
//     is -32602;
//   - resources/directory/read: the direct children of a directory of the
//     skill namespace (a skill's root, its subdirectories, the prefix
//     directories above skills); subdirectories carry mimeType
//     inode/directory; anything else is -32602.
//
// Files are read once, at registration, and served from memory, so that
// a digest always describes the bytes served. A skill over the
// specification's limits (512 files, 16 MiB) is refused at registration,
// as are a SKILL.md whose frontmatter does not parse, a skill name that
// breaks the Agent Skills naming rule or differs from its directory's
// name, a URI already served, and a skill nested in (or enclosing) a
// skill of another AddSkills call.
//
// Per-caller filtering works as for tools: the registration's options
// (RequireScopes, RequireCapabilities) apply to every file, and
// Options.Visible sees each skill as an Item of kind ItemSkill named by
// its SKILL.md URI; a file is governed by the innermost skill that holds
// it. A hidden skill is absent from skills/list, resources/list and the
// directory listings, and skills/get and resources/read answer for it as
// for an unknown URI. A skill nested in another is part of the enclosing
// skill's files (the specification's completeness rule): a Visible hook
// should show or hide the two together, or the enclosing skill's entry
// lists files its reader cannot read.

// SkillsExtension is the identifier of the Skills extension (SEP-2640) in
// capabilities.extensions.
const SkillsExtension = "io.modelcontextprotocol/skills"

// The specification's per-skill limits.
const (
	maxSkillFiles = 512
	maxSkillBytes = 16 << 20
)

// skillName is the Agent Skills naming rule, less its "no --" clause
// (checked apart: RE2 has no lookahead).
var skillName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

const (
	skillScheme = "skill://"
	skillMD     = "SKILL.md"
	dirMIME     = "inode/directory"
)

// skillEntry is a served skill.
type skillEntry struct {
	uri   string // its SKILL.md
	root  string // its directory: uri without "/SKILL.md"
	fm    skillmd.Frontmatter
	wire  json.RawMessage // its Skill entry
	opts  regOptions
	files []*skillFile // SKILL.md first, then by URI; nested skills' files included
}

func (e *skillEntry) item() Item { return Item{Kind: ItemSkill, Name: e.uri, Scopes: e.opts.Scopes} }

// skillFile is one served file.
type skillFile struct {
	uri   string
	name  string // the file's name, its last path element
	mime  string
	data  []byte
	skill *skillEntry // the innermost skill holding it
}

// skillDir is a directory of the skill namespace.
type skillDir struct {
	uri      string
	children []dirChild // by URI
	// skills govern the directory's visibility: the innermost skill
	// holding it, or for a directory above skills every skill below it.
	skills []*skillEntry
}

type dirChild struct {
	wire json.RawMessage
	file *skillFile // nil for a subdirectory
	dir  *skillDir
}

// skillSet is the server's skills; guarded by Server.mu, but for ext.
type skillSet struct {
	list  []*skillEntry // registration order, by path within one call
	byURI map[string]*skillEntry
	files []*skillFile
	dirs  map[string]*skillDir
	// ext is set once the extension is registered; guarded by
	// Server.skillsReg.
	ext bool
}

// AddSkills serves every skill in fsys: each directory holding a SKILL.md
// is a skill, at the path it has in fsys (a SKILL.md at the root of fsys
// makes fsys one skill, at the path of its name). The files are read now,
// and served from memory; names starting with "." and anything that is
// not a regular file or directory (a symbolic link, say) are skipped, as
// are files outside every skill. opts apply to every file of every skill
// (RequireScopes, for one). The first call advertises the Skills
// extension. See SkillsExtension for what is served.
func (s *Server) AddSkills(fsys fs.FS, opts ...ResourceOption) error {
	if fsys == nil {
		return errors.New("add skills: nil fs.FS")
	}
	o, err := collectOptions("add skills", opts, ResourceOption.applyResource)
	if err != nil {
		return err
	}
	skills, files, err := loadSkills(fsys, o)
	if err != nil {
		return fmt.Errorf("add skills: %w", err)
	}
	if len(skills) == 0 {
		return errors.New("add skills: no SKILL.md in the file system")
	}
	entries := make([]*resourceEntry, len(files))
	for i, f := range files {
		if entries[i], err = f.resource(); err != nil {
			return fmt.Errorf("add skills: %w", err)
		}
	}
	s.skillsReg.Lock()
	defer s.skillsReg.Unlock()
	served := func() error {
		for _, f := range files {
			if _, ok := s.resources.get(f.uri); ok {
				return fmt.Errorf("add skills: %s is already served", clip.String(f.uri))
			}
		}
		// A skill nested in (or enclosing) one of another call: the
		// enclosing entry, made by its own call, could not list the
		// nested skill's files, as the specification requires.
		for _, sk := range skills {
			for _, o := range s.skills.list {
				if strings.HasPrefix(sk.root+"/", o.root+"/") || strings.HasPrefix(o.root+"/", sk.root+"/") {
					return fmt.Errorf("add skills: skill %s nests with skill %s of another AddSkills call; serve the two in one call", clip.String(sk.uri), clip.String(o.uri))
				}
			}
		}
		return nil
	}
	if !s.skills.ext {
		// Registered once the skills are known to be servable, so that a
		// refused first call leaves nothing advertised.
		s.mu.RLock()
		err := served()
		s.mu.RUnlock()
		if err != nil {
			return err
		}
		if err := s.addSkillsExtension(); err != nil {
			return fmt.Errorf("add skills: %w", err)
		}
		s.skills.ext = true
	}
	s.noteScopes(o)
	s.mu.Lock()
	if err := served(); err != nil {
		s.mu.Unlock()
		return err
	}
	for i, f := range files {
		s.resources.put(f.uri, entries[i])
	}
	ss := &s.skills
	if ss.byURI == nil {
		ss.byURI = map[string]*skillEntry{}
	}
	for _, sk := range skills {
		ss.byURI[sk.uri] = sk
	}
	ss.list = append(ss.list, skills...)
	ss.files = append(ss.files, files...)
	ss.dirs = skillDirs(ss.files, ss.list)
	s.mu.Unlock()
	s.changed(era.Change{Kind: era.ResourcesChanged})
	return nil
}

// resource is the file's resource registration.
func (f *skillFile) resource() (*resourceEntry, error) {
	size := int64(len(f.data))
	res := Resource{URI: f.uri, Name: f.name, MimeType: f.mime, Size: &size}
	isSkill := f.skill.uri == f.uri
	if isSkill {
		res.Name, res.Description = f.skill.fm.Name, f.skill.fm.Description
	}
	e := &resourceEntry{res: res, opts: f.skill.opts, skill: f.skill, unlisted: !isSkill}
	var err error
	if e.wire, err = marshalNoEscape(res); err != nil {
		return nil, fmt.Errorf("%s: encode: %w", f.uri, err)
	}
	// The contents are made once: every read serves the same, which
	// nothing modifies.
	c := mcp.BlobContents(f.uri, f.mime, f.data)
	if utf8.Valid(f.data) {
		c = mcp.TextContents(f.uri, f.mime, string(f.data))
	}
	contents := []mcp.ResourceContents{c}
	e.handler = func(context.Context, *ResourceRequest) (*ResourceResult, error) {
		return &ResourceResult{Contents: contents}, nil
	}
	return e, nil
}

// loadSkills reads the skills of fsys.
func loadSkills(fsys fs.FS, o regOptions) ([]*skillEntry, []*skillFile, error) {
	paths, roots, err := skillTree(fsys)
	if err != nil {
		return nil, nil, err
	}
	data := make(map[string][]byte, len(paths)) // every file read, by path
	read := func(p string) ([]byte, error) {
		if b, ok := data[p]; ok {
			return b, nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		data[p] = b
		return b, nil
	}
	// The frontmatter of the SKILL.md of each skill directory.
	frontmatter := func(dir string) (skillmd.Frontmatter, error) {
		p := path.Join(dir, skillMD)
		b, err := read(p)
		if err != nil {
			return skillmd.Frontmatter{}, err
		}
		fm, err := skillmd.Parse(b)
		if err != nil {
			return skillmd.Frontmatter{}, fmt.Errorf("%s: %w", p, err)
		}
		return fm, nil
	}
	dirs := slices.Sorted(maps.Keys(roots))
	fms := make([]skillmd.Frontmatter, len(dirs))
	for i, dir := range dirs {
		if fms[i], err = frontmatter(dir); err != nil {
			return nil, nil, err
		}
	}
	// The skill namespace: fsys's paths, under the root skill's name if
	// fsys is one.
	ns := func(p string) string { return p }
	if i := slices.Index(dirs, "."); i >= 0 {
		name := fms[i].Name
		ns = func(p string) string {
			if p == "." {
				return name
			}
			return name + "/" + p
		}
	}
	var (
		skills []*skillEntry
		files  []*skillFile
		byPath = map[string]*skillFile{}
	)
	for i, dir := range dirs {
		sk, err := newSkill(path.Join(dir, skillMD), fms[i], ns(dir), o)
		if err != nil {
			return nil, nil, err
		}
		skills = append(skills, sk)
	}
	// Every file of a skill, with the innermost skill holding it (the
	// longest root of those that hold it).
	for _, p := range paths {
		var inner *skillEntry
		innerLen := -1
		for i, dir := range dirs {
			if (dir == "." || strings.HasPrefix(p, dir+"/")) && len(dir) > innerLen {
				inner, innerLen = skills[i], len(dir)
			}
		}
		if inner == nil {
			continue // outside every skill
		}
		b, err := read(p)
		if err != nil {
			return nil, nil, err
		}
		uri, err := skillURI(ns(p))
		if err != nil {
			return nil, nil, err
		}
		f := &skillFile{uri: uri, name: path.Base(p), mime: skillMIME(p), data: b, skill: inner}
		files = append(files, f)
		byPath[p] = f
	}
	for i, dir := range dirs {
		if err := skills[i].manifest(dir, paths, byPath); err != nil {
			return nil, nil, err
		}
	}
	return skills, files, nil
}

// skillTree walks fsys: its regular files, by path, and the directories
// holding a SKILL.md. A skill over the specification's limits is refused
// here, by the sizes the walk reads, before any file is read (manifest
// checks again what was read).
func skillTree(fsys fs.FS) (paths []string, roots map[string]bool, err error) {
	roots = map[string]bool{}
	sizes := map[string]int64{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		paths = append(paths, p)
		sizes[p] = info.Size()
		if d.Name() == skillMD {
			roots[path.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for dir := range roots {
		var n int
		var total int64
		for _, p := range paths {
			if dir == "." || strings.HasPrefix(p, dir+"/") {
				n, total = n+1, total+sizes[p]
			}
		}
		if n > maxSkillFiles || total > maxSkillBytes {
			return nil, nil, fmt.Errorf("skill %s has %d files of %d bytes, over the Skills extension's limits of %d files and %d bytes (16 MiB)", path.Join(dir, skillMD), n, total, maxSkillFiles, maxSkillBytes)
		}
	}
	return paths, roots, nil
}

// newSkill is the skill whose SKILL.md, at p, has the frontmatter fm,
// at nsPath in the skill namespace, once its name is checked.
func newSkill(p string, fm skillmd.Frontmatter, nsPath string, o regOptions) (*skillEntry, error) {
	if !skillName.MatchString(fm.Name) || strings.Contains(fm.Name, "--") {
		return nil, fmt.Errorf("%s: skill name %s breaks the Agent Skills naming rule: 1 to 64 of a-z, 0-9 and '-', not starting or ending with '-', no \"--\"", p, clip.Quote(fm.Name))
	}
	if last := path.Base(nsPath); last != fm.Name {
		return nil, fmt.Errorf("%s: skill name %s differs from its directory's name %s", p, clip.Quote(fm.Name), clip.Quote(last))
	}
	root, err := skillURI(nsPath)
	if err != nil {
		return nil, err
	}
	// The entry is encoded once its files are known (manifest).
	return &skillEntry{uri: root + "/" + skillMD, root: root, fm: fm, opts: o}, nil
}

type skillWire struct {
	URI         string              `json:"uri"`
	Frontmatter json.RawMessage     `json:"frontmatter"`
	Resources   []skillResourceWire `json:"resources"`
}

type skillResourceWire struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// manifest sets the skill's files (every file under dir) and encodes its
// entry, within the specification's limits.
func (sk *skillEntry) manifest(dir string, paths []string, byPath map[string]*skillFile) error {
	var total int
	for _, p := range paths {
		if dir != "." && !strings.HasPrefix(p, dir+"/") {
			continue
		}
		f := byPath[p]
		sk.files = append(sk.files, f)
		total += len(f.data)
	}
	if n := len(sk.files); n > maxSkillFiles {
		return fmt.Errorf("skill %s has %d files, over the Skills extension's limit of %d", sk.uri, n, maxSkillFiles)
	}
	if total > maxSkillBytes {
		return fmt.Errorf("skill %s holds %d bytes, over the Skills extension's limit of %d (16 MiB)", sk.uri, total, maxSkillBytes)
	}
	slices.SortFunc(sk.files, func(a, b *skillFile) int {
		switch {
		case a.uri == sk.uri:
			return -1
		case b.uri == sk.uri:
			return 1
		}
		return strings.Compare(a.uri, b.uri)
	})
	w := skillWire{URI: sk.uri, Frontmatter: sk.fm.JSON, Resources: make([]skillResourceWire, len(sk.files))}
	for i, f := range sk.files {
		sum := sha256.Sum256(f.data)
		w.Resources[i] = skillResourceWire{URI: f.uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(f.data)}
	}
	var err error
	sk.wire, err = marshalNoEscape(w)
	return err
}

// skillURI is the skill:// URI of a path of the skill namespace: each
// segment path-escaped; the first, the URI's authority, must be a
// reg-name (RFC 3986) as it is.
func skillURI(p string) (string, error) {
	segs := strings.Split(p, "/")
	if !regName(segs[0]) {
		return "", fmt.Errorf("%s: the top directory %s is not a URI host name (RFC 3986 reg-name: letters, digits, and -._~!$&'()*+,;=)", p, clip.Quote(segs[0]))
	}
	for i := 1; i < len(segs); i++ {
		segs[i] = url.PathEscape(segs[i])
	}
	return skillScheme + strings.Join(segs, "/"), nil
}

func regName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && !strings.ContainsRune("-._~!$&'()*+,;=", rune(c)) {
			return false
		}
	}
	return true
}

// skillMIME is a file's media type by its extension: the usual types of
// skill files, then the standard library's table.
func skillMIME(p string) string {
	ext := strings.ToLower(path.Ext(p))
	switch ext {
	case ".md", ".markdown":
		return "text/markdown"
	case ".txt":
		return "text/plain"
	case ".py":
		return "text/x-python"
	case ".sh":
		return "text/x-shellscript"
	case ".json":
		return "application/json"
	case ".yaml", ".yml":
		return "application/yaml"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// skillDirs builds the directory map of the skill namespace.
func skillDirs(files []*skillFile, skills []*skillEntry) map[string]*skillDir {
	dirs := map[string]*skillDir{}
	dir := func(uri string) *skillDir {
		d := dirs[uri]
		if d == nil {
			d = &skillDir{uri: uri}
			dirs[uri] = d
		}
		return d
	}
	children := map[string]map[string]dirChild{}
	addChild := func(parent string, uri string, c dirChild) {
		m := children[parent]
		if m == nil {
			m = map[string]dirChild{}
			children[parent] = m
		}
		if _, ok := m[uri]; !ok {
			m[uri] = c
		}
	}
	for _, f := range files {
		size := int64(len(f.data))
		w, _ := marshalNoEscape(Resource{URI: f.uri, Name: f.name, MimeType: f.mime, Size: &size})
		child, parent := f.uri, parentURI(f.uri)
		addChild(parent, child, dirChild{wire: w, file: f})
		for parent != "" {
			d := dir(parent)
			up := parentURI(parent)
			if _, seen := children[up][parent]; seen {
				break // another file went this way: the rest is there
			}
			if up != "" {
				name, _ := url.PathUnescape(parent[len(up)+1:])
				w, _ := marshalNoEscape(Resource{URI: parent, Name: name, MimeType: dirMIME})
				addChild(up, parent, dirChild{wire: w, dir: d})
			}
			parent = parentURI(parent)
		}
	}
	// A directory at or under a skill's root is governed by the innermost
	// such skill; one above skills by every skill below it.
	for uri, d := range dirs {
		var inner *skillEntry
		for _, sk := range skills {
			if (uri == sk.root || strings.HasPrefix(uri, sk.root+"/")) && (inner == nil || len(sk.root) > len(inner.root)) {
				inner = sk
			}
		}
		if inner != nil {
			d.skills = []*skillEntry{inner}
		} else {
			for _, sk := range skills {
				if strings.HasPrefix(sk.uri, uri+"/") {
					d.skills = append(d.skills, sk)
				}
			}
		}
		m := children[uri]
		for _, k := range slices.Sorted(maps.Keys(m)) {
			d.children = append(d.children, m[k])
		}
	}
	return dirs
}

// parentURI is the directory above uri in the skill namespace, "" above
// the authority.
func parentURI(uri string) string {
	rest := strings.TrimPrefix(uri, skillScheme)
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return ""
	}
	return skillScheme + rest[:i]
}

// addSkillsExtension registers the Skills extension through the extension
// API: offered to clients of both eras, which need not declare it.
func (s *Server) addSkillsExtension() error {
	ext, err := newExtension(Extension{
		ID:       SkillsExtension,
		Settings: map[string]bool{"directoryRead": true},
		Methods:  map[string]ExtensionMethod{"skills/list": {}, "skills/get": {}, "resources/directory/read": {}},
		Legacy:   true,
	})
	if err != nil {
		return err
	}
	ext.undeclared = true
	serve := map[string]func(context.Context, *request) (json.RawMessage, *mcp.Error){
		"skills/list":              s.listSkills,
		"skills/get":               s.getSkill,
		"resources/directory/read": s.readDirectory,
	}
	builtin := map[string]*extMethod{}
	for name, f := range serve {
		builtin[name] = &extMethod{serve: func(ctx context.Context, r *request, _ notifier) (json.RawMessage, *mcp.Error) {
			return f(ctx, r)
		}}
	}
	return s.addExtension(ext, builtin)
}

type skillsListWire struct {
	ResultType string            `json:"resultType,omitempty"`
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor,omitempty"`
	TTL        *int64            `json:"ttlMs,omitempty"`
	Scope      string            `json:"cacheScope,omitempty"`
	Meta       json.RawMessage   `json:"_meta,omitempty"`
}

// listSkills serves skills/list: the entries the caller may see, paged.
func (s *Server) listSkills(ctx context.Context, r *request) (json.RawMessage, *mcp.Error) {
	s.mu.RLock()
	list := slices.Clone(s.skills.list)
	s.mu.RUnlock()
	// The filter runs outside the lock: Options.Visible is user code.
	all := make([]json.RawMessage, 0, len(list))
	scoped := false
	for _, sk := range list {
		scoped = scoped || len(sk.opts.Scopes) > 0
		if s.visible(ctx, sk.item()) {
			all = append(all, sk.wire)
		}
	}
	cache := s.opts.ListCache
	if s.listPrivate(scoped) {
		cache.Scope = "private"
	}
	start, end, next, e := s.page(len(all), r.p.Cursor)
	if e != nil {
		return nil, e
	}
	w := skillsListWire{ResultType: r.resultType(), Skills: all[start:end:end], NextCursor: next, Meta: s.resultMeta(r, nil)}
	w.TTL, w.Scope = cacheHint(r, cache)
	return s.encode(w)
}

type skillGetWire struct {
	ResultType string          `json:"resultType,omitempty"`
	Skill      json.RawMessage `json:"skill"`
	TTL        *int64          `json:"ttlMs,omitempty"`
	Scope      string          `json:"cacheScope,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// getSkill serves skills/get: one entry, by its SKILL.md URI.
func (s *Server) getSkill(ctx context.Context, r *request) (json.RawMessage, *mcp.Error) {
	uri, e := uriParam(r)
	if e != nil {
		return nil, e
	}
	s.mu.RLock()
	sk := s.skills.byURI[uri]
	s.mu.RUnlock()
	if sk == nil || !s.visible(ctx, sk.item()) {
		return nil, uriError("No skill is served at %s", uri)
	}
	cache := s.opts.ReadCache
	if s.listPrivate(len(sk.opts.Scopes) > 0) {
		cache.Scope = "private"
	}
	w := skillGetWire{ResultType: r.resultType(), Skill: sk.wire, Meta: s.resultMeta(r, nil)}
	w.TTL, w.Scope = cacheHint(r, cache)
	return s.encode(w)
}

type dirReadWire struct {
	ResultType string            `json:"resultType,omitempty"`
	Resources  []json.RawMessage `json:"resources"`
	NextCursor string            `json:"nextCursor,omitempty"`
	Meta       json.RawMessage   `json:"_meta,omitempty"`
}

// readDirectory serves resources/directory/read: the children of a
// directory of the skill namespace that the caller may see, paged.
func (s *Server) readDirectory(ctx context.Context, r *request) (json.RawMessage, *mcp.Error) {
	uri, e := uriParam(r)
	if e != nil {
		return nil, e
	}
	s.mu.RLock()
	d := s.skills.dirs[uri]
	s.mu.RUnlock()
	seen := func(skills []*skillEntry) bool {
		return slices.ContainsFunc(skills, func(sk *skillEntry) bool { return s.visible(ctx, sk.item()) })
	}
	if d == nil || !seen(d.skills) {
		return nil, uriError("%s is not a directory resource", uri)
	}
	all := make([]json.RawMessage, 0, len(d.children))
	for _, c := range d.children {
		if (c.file != nil && s.visible(ctx, c.file.skill.item())) || (c.dir != nil && seen(c.dir.skills)) {
			all = append(all, c.wire)
		}
	}
	start, end, next, e := s.page(len(all), r.p.Cursor)
	if e != nil {
		return nil, e
	}
	return s.encode(dirReadWire{ResultType: r.resultType(), Resources: all[start:end:end], NextCursor: next, Meta: s.resultMeta(r, nil)})
}
