package baton_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// maxTracked is the largest file the repository may track outside a
// testdata directory: a build output or a data dump committed by mistake
// is carried by every clone from then on.
const maxTracked = 1 << 20

// TestNoLargeTrackedFile fails when git tracks a file over maxTracked
// bytes that is not test data (under a testdata/ directory).
func TestNoLargeTrackedFile(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed (apt-get install git): cannot list the tracked files")
	}
	if _, err := os.Stat(".git"); err != nil {
		t.Skip("no .git here (not a clone): cannot list the tracked files")
	}
	out, err := exec.Command(git, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	tracked := 0
	for _, name := range bytes.Split(out, []byte{0}) {
		path := string(name)
		if path == "" {
			continue
		}
		tracked++
		fi, err := os.Lstat(path)
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if !fi.Mode().IsRegular() || fi.Size() <= maxTracked {
			continue
		}
		if strings.HasPrefix(path, "testdata/") || strings.Contains(path, "/testdata/") {
			continue
		}
		t.Errorf("%s is tracked and %d bytes (over %d) outside a testdata/ directory: git rm --cached it, and ignore it if it is built", path, fi.Size(), maxTracked)
	}
	if tracked == 0 {
		t.Fatal("git ls-files listed no file")
	}
}
