package baton_test

// The layering test, as go/build's deps_test holds the standard library's:
// every package of the module sits in one layer, and imports only from the
// layers below its own. docs/packages.md shows the same
// list; this test is its source of truth and fails when the two differ.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/baton-mcp/baton"

// layers are the module's packages, lowest first. A package may import a
// package of any layer below its own, and none of its own layer or above.
var layers = [][]string{
	{"internal/bufpool"},
	{"internal/clientaddr", "internal/clip", "internal/contract", "internal/jsonw", "internal/loglevel", "internal/skillmd", "internal/sse", "internal/testredis"},
	{"internal/jsonscan"},
	{"internal/strictjson"},
	{"mcp"},
	{"internal/rpcwire"},
	{"internal/era"},
	{"elicit"},
	{"mrtr"},
	{"server/internal/seal", "mcptest"},
	{"server/internal/round"},
	{"server"},
	{"legacy"},
	{"storetest", "auth", "lambda"},
	{"redisfleet"},
}

// thirdParty says which packages may import a module outside the standard
// library and Baton, by module path prefix. Anything else imports only the
// standard library and Baton.
var thirdParty = map[string][]string{
	"github.com/redis/go-redis/":             {"redisfleet", "internal/testredis"},
	"github.com/aws/aws-lambda-go/":          {"lambda"},
	"go.opentelemetry.io/otel/":              {"server"},
	"github.com/golang-jwt/jwt/":             {"server/internal/seal", "auth"},
	"github.com/MicahParks/":                 {"auth"},
	"github.com/go-jose/":                    {"auth"},
	"golang.org/x/time/":                     {"auth"},
	"github.com/google/jsonschema-go/":       {"server"},
	"github.com/santhosh-tekuri/jsonschema/": {"server", "elicit"},
	"github.com/segmentio/encoding/":         {"internal/strictjson"},
	"golang.org/x/text/":                     {"server", "elicit"},
	"go.yaml.in/yaml/":                       {"internal/skillmd"},
}

type listed struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// list returns the packages (tests excluded) of the module in dir ("."
// for this one, "examples" for the examples' own module), by path
// relative to this module.
func list(t *testing.T, dir string) map[string]*listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Standard", "./...")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]*listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue
		}
		pkgs[rel] = &p
	}
	return pkgs
}

// outsideTheLayers are the module's programs: nothing imports them.
func outsideTheLayers(rel string) bool {
	return strings.HasPrefix(rel, "scripts/")
}

func TestLayers(t *testing.T) {
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			if _, dup := layerOf[p]; dup {
				t.Fatalf("%s is in two layers", p)
			}
			layerOf[p] = i
		}
	}
	pkgs := list(t, ".")
	for rel := range layerOf {
		if pkgs[rel] == nil {
			t.Errorf("layer package %s does not exist: remove it from the layers", rel)
		}
	}
	for rel, p := range pkgs {
		if outsideTheLayers(rel) {
			continue
		}
		from, ok := layerOf[rel]
		if !ok {
			t.Errorf("package %s is in no layer: add it to the layers here and in docs/packages.md", rel)
			continue
		}
		for _, imp := range p.Imports {
			if dep, ok := strings.CutPrefix(imp, module+"/"); ok {
				if to, ok := layerOf[dep]; ok && to >= from {
					t.Errorf("%s imports %s: that import runs back up the layering (layer %d imports layer %d)", rel, dep, from+1, to+1)
				}
				continue
			}
			if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				continue // the standard library
			}
			allowed := false
			for prefix, users := range thirdParty {
				if strings.HasPrefix(imp+"/", prefix) {
					for _, u := range users {
						allowed = allowed || u == rel
					}
				}
			}
			if !allowed {
				t.Errorf("%s imports %s, which only the packages listed in thirdParty may", rel, imp)
			}
		}
	}
}

// Examples are written against the public API only. They are a module
// of their own (examples/go.mod), so that what only they use is no
// dependency of this one.
func TestExamplesImportNoInternalPackage(t *testing.T) {
	pkgs := list(t, "examples")
	if len(pkgs) < 5 {
		t.Fatalf("go list in examples/ named %d packages: is examples/go.mod still there?", len(pkgs))
	}
	for rel, p := range pkgs {
		if !strings.HasPrefix(rel, "examples/") {
			t.Errorf("examples/go.mod lists package %s, outside examples/", rel)
			continue
		}
		for _, imp := range p.Imports {
			if dep, ok := strings.CutPrefix(imp, module+"/"); ok && (strings.HasPrefix(dep, "internal/") || strings.Contains(dep, "/internal/")) {
				t.Errorf("%s imports %s: examples use only the public API", rel, dep)
			}
		}
	}
}

// docs/packages.md shows the layers exactly as this test holds them: the
// code block that follows the sentence naming deps_test.go.
func TestDocumentedLayers(t *testing.T) {
	readme, err := os.ReadFile("docs/packages.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := bytes.Cut(readme, []byte("`deps_test.go` holds the same list"))
	if !ok {
		t.Fatal("docs/packages.md no longer names deps_test.go before its list of layers")
	}
	_, block, ok := bytes.Cut(after, []byte("```\n"))
	if !ok {
		t.Fatal("docs/packages.md: no code block after the sentence naming deps_test.go")
	}
	block, _, _ = bytes.Cut(block, []byte("```"))
	var want []string
	for _, l := range layers {
		want = append(want, strings.Join(l, " "))
	}
	got := strings.Split(strings.TrimSpace(string(block)), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/packages.md's layers differ from deps_test.go's:\ndocs/packages.md:\n%s\n\ndeps_test.go:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// docs/packages.md's block names every public package, and no other.
func TestDocumentedPackages(t *testing.T) {
	readme, err := os.ReadFile("docs/packages.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := bytes.Cut(readme, []byte("# Packages\n"))
	if !ok {
		t.Fatal(`docs/packages.md has no "# Packages" heading`)
	}
	_, block, ok := bytes.Cut(section, []byte("```\n"))
	if !ok {
		t.Fatal("docs/packages.md has no code block")
	}
	block, _, _ = bytes.Cut(block, []byte("```"))
	named := map[string]bool{}
	for _, line := range strings.Split(string(block), "\n") {
		if line == "" || line[0] == ' ' {
			continue
		}
		named[strings.Fields(line)[0]] = true
	}
	for rel := range list(t, ".") {
		if outsideTheLayers(rel) || strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/") {
			continue
		}
		if !named[rel] {
			t.Errorf("docs/packages.md does not name package %s", rel)
		}
		delete(named, rel)
	}
	for _, extra := range []string{"internal/", "examples", "bench"} {
		delete(named, extra)
	}
	for p := range named {
		t.Errorf("docs/packages.md names %s, which is not a public package", p)
	}
}

// testOnly are the modules this one requires only for its own tests, and
// why those tests are not in the examples' module.
var testOnly = map[string]string{
	// server's telemetry tests read the spans and metrics back with the SDK's
	// in-memory exporter and reader: the SDK is what a user installs too.
	"go.opentelemetry.io/otel/sdk": "server telemetry tests",
	// auth's tests serve a JWKS; keyfunc requires it anyway.
	"github.com/MicahParks/jwkset": "auth tests",
}

// exampleOnly are modules only the examples, the benchmarks or the CI
// tools use: each has its own go.mod (examples/, bench/, internal/tools/).
var exampleOnly = []string{
	"github.com/chromedp/",
	"github.com/prometheus/",
	"go.opentelemetry.io/otel/exporters/prometheus",
	"github.com/zitadel/",
	"github.com/labstack/echo/",
	"gotest.tools/gotestsum",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/mark3labs/mcp-go",
}

// TestRootRequirements holds the root go.mod to what the library uses:
// each module it requires directly is imported by a package that
// thirdParty names, or is in testOnly; and no module of exampleOnly is in
// its build list (go list -m all), directly or not.
func TestRootRequirements(t *testing.T) {
	out, err := exec.Command("go", "mod", "edit", "-json").Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
		Tool []struct{ Path string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	direct := 0
	for _, r := range mod.Require {
		if r.Indirect {
			continue
		}
		direct++
		used := testOnly[r.Path] != ""
		for prefix := range thirdParty {
			used = used || strings.HasPrefix(prefix, r.Path+"/") || strings.HasPrefix(r.Path+"/", prefix)
		}
		if !used {
			t.Errorf("go.mod requires %s, which no library package may import (thirdParty) and no test needs (testOnly): if only examples use it, it belongs in examples/go.mod", r.Path)
		}
	}
	if direct == 0 {
		t.Fatal("go mod edit -json listed no direct requirement")
	}
	for _, tool := range mod.Tool {
		t.Errorf("go.mod has tool %s: tools are in internal/tools/go.mod (go tool -modfile=internal/tools/go.mod)", tool.Path)
	}
	all, err := exec.Command("go", "list", "-m", "all").Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	for line := range strings.Lines(string(all)) {
		path := strings.Fields(line)[0]
		for _, prefix := range exampleOnly {
			if strings.HasPrefix(path, prefix) {
				t.Errorf("go list -m all names %s, which only examples, benchmarks or tools use", path)
			}
		}
	}
}
