// Command apistats measures Baton's public surface, the same way before and
// after a restructure: public packages, exported identifiers (top level and
// methods, and exported struct fields), the Baton packages a few example
// programs import, the imports that run back up the layering, and lines per
// package.
//
// Run it from the module root: go run ./scripts/apistats
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const module = "github.com/baton-mcp/baton"

// examples are the programs whose Baton imports are counted.
var examples = []string{"examples/quickstart", "examples/fourkinds", "examples/everything"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "apistats:", err)
		os.Exit(1)
	}
}

type pkgStats struct {
	dir                    string
	idents, methods, field int
	lines, testLines       int
	imports                []string
}

func run() error {
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bench" || name == "scripts") {
			return filepath.SkipDir
		}
		if m, _ := filepath.Glob(filepath.Join(path, "*.go")); len(m) > 0 {
			dirs = append(dirs, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(dirs)
	var public []*pkgStats
	all := map[string]*pkgStats{}
	for _, dir := range dirs {
		st, err := measure(dir)
		if err != nil {
			return err
		}
		all[dir] = st
		if isPublic(dir) {
			public = append(public, st)
		}
	}
	var idents, methods, fields int
	fmt.Println("package\tidents\tmethods\tfields\tlines\ttest lines")
	for _, st := range public {
		idents += st.idents
		methods += st.methods
		fields += st.field
		fmt.Printf("%s\t%d\t%d\t%d\t%d\t%d\n", st.dir, st.idents, st.methods, st.field, st.lines, st.testLines)
	}
	fmt.Println()
	fmt.Println("internal package\tlines\ttest lines")
	for _, dir := range dirs {
		if strings.Contains("/"+dir+"/", "/internal/") {
			st := all[dir]
			fmt.Printf("%s\t%d\t%d\n", dir, st.lines, st.testLines)
		}
	}
	fmt.Println()
	fmt.Printf("public packages: %d\n", len(public))
	fmt.Printf("exported identifiers: %d (top level %d + methods %d); exported fields: %d\n", idents+methods, idents, methods, fields)
	for _, ex := range examples {
		st, ok := all[ex]
		if !ok {
			fmt.Printf("imports of %s: (absent)\n", ex)
			continue
		}
		fmt.Printf("Baton imports of %s: %d %v\n", ex, len(st.imports), st.imports)
	}
	up, err := backUp()
	if err != nil {
		return err
	}
	fmt.Printf("imports from the module's internal/ to a public package other than mcp: %d\n", len(up))
	for _, e := range up {
		fmt.Println("\t" + e)
	}
	return nil
}

// isPublic reports whether dir is an importable, non-example package.
func isPublic(dir string) bool {
	if strings.HasPrefix(dir, "examples") || dir == "." {
		return false
	}
	return !strings.Contains("/"+dir+"/", "/internal/")
}

func measure(dir string) (*pkgStats, error) {
	st := &pkgStats{dir: dir}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	imports := map[string]bool{}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		n := bytes.Count(src, []byte("\n"))
		if strings.HasSuffix(name, "_test.go") {
			st.testLines += n
			continue
		}
		st.lines += n
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if strings.HasPrefix(p, module+"/") {
				imports[strings.TrimPrefix(p, module+"/")] = true
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					st.idents++
				} else if recvExported(d.Recv.List[0].Type) {
					st.methods++
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						st.idents++
						switch t := s.Type.(type) {
						case *ast.StructType:
							st.field += exportedFields(t.Fields)
						case *ast.InterfaceType:
							st.methods += exportedFields(t.Methods)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								st.idents++
							}
						}
					}
				}
			}
		}
	}
	for p := range imports {
		st.imports = append(st.imports, p)
	}
	sort.Strings(st.imports)
	return st, nil
}

func recvExported(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

func exportedFields(fl *ast.FieldList) int {
	n := 0
	for _, f := range fl.List {
		if len(f.Names) == 0 { // embedded: promoted, not a field of its own
			continue
		}
		for _, name := range f.Names {
			if name.IsExported() {
				n++
			}
		}
	}
	return n
}

// backUp lists the imports from a package under the module's top-level
// internal/ to a public package other than mcp (the vocabulary): the plumbing floor
// reaching up into the vocabulary or above.
func backUp() ([]string, error) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./internal/...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var edges []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			rel := strings.TrimPrefix(imp, module+"/")
			if strings.HasPrefix(rel, "internal/") || rel == "mcp" {
				continue
			}
			edges = append(edges, strings.TrimPrefix(f[0], module+"/")+" -> "+rel)
		}
	}
	return edges, sc.Err()
}
