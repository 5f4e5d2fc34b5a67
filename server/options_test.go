package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
)

// Each option is of the kinds it applies to (a compile-time check).
var (
	_ Option          = AnswersWithoutState()
	_ ToolOption      = SkipInputValidation()
	_ Option          = RequireCapabilities(mcp.ClientCapabilities{})
	_ ToolOption      = RunAsTask(TaskOptional)
	_ ToolOption      = DeferTask()
	_ TypedToolOption = RefineSchemas(nil)
)

// Options combine where they apply.
func TestOptionsCombineWhereTheyApply(t *testing.T) {
	s := newTestServer(t, nil)
	prompt := func(context.Context, *PromptRequest) (*PromptResult, error) { return &PromptResult{}, nil }
	resource := func(context.Context, *ResourceRequest) (*ResourceResult, error) { return &ResourceResult{}, nil }
	tool := func(context.Context, *ToolRequest) (*ToolResult, error) { return TextResult("x"), nil }
	if err := s.AddPrompt(Prompt{Name: "p"}, prompt, AnswersWithoutState()); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(Resource{URI: "test://r", Name: "r"}, resource, AnswersWithoutState()); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(Tool{Name: "t"}, tool, AnswersWithoutState(), SkipInputValidation(), RunAsTask(TaskOptional), DeferTask()); err != nil {
		t.Fatal(err)
	}
	var none PromptOption
	if err := s.AddPrompt(Prompt{Name: "q"}, prompt, none); err == nil || !strings.Contains(err.Error(), "option 1 is nil") {
		t.Fatalf("a nil option: %v", err)
	}
}

// An option given where it does not apply does not compile: testdata/misuse
// gives each kind a wrong option, and the build fails on each of those
// lines, saying which option interface is missing.
func TestMisusedOptionsDoNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program: not in -short")
	}
	src, err := os.ReadFile("testdata/misuse/main.go")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		if _, w, ok := strings.Cut(sc.Text(), "// want: "); ok {
			want[n] = w
		}
	}
	if len(want) == 0 {
		t.Fatal("testdata/misuse/main.go marks no line with // want:")
	}
	out, err := exec.Command("go", "build", "-o", os.DevNull, "./testdata/misuse").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("go build ./testdata/misuse: %v (want a compile error)\n%s", err, out)
	}
	for line, w := range want {
		prefix := fmt.Sprintf("main.go:%d:", line)
		found := false
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, prefix) && strings.Contains(l, w) {
				found = true
			}
		}
		if !found {
			t.Errorf("line %d compiled, or failed otherwise; want an error %q:\n%s", line, w, out)
		}
	}
}
