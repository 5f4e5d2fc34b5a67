// Package contract runs a store's contract suite: the checks of
// package storetest (sessions, events, tasks), each on an empty store, either as
// subtests of a *testing.T (Run) or collecting failures without one (Test),
// as testing/fstest does for an fs.FS.
package contract

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// TB is what a check uses of a *testing.T; Test gives it a recorder.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// Check is one named check of a contract, run on an empty store.
type Check[S any] struct {
	Name string
	Run  func(TB, S)
}

// Run runs each check as a subtest of t, on a store made by newStore.
func Run[S any](t *testing.T, checks []Check[S], newStore func(t *testing.T) S) {
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, newStore(t)) })
	}
}

// Test runs each check on a store made by newStore and returns an error
// describing every failure, each prefixed with its check's name, or nil.
// suite names the suite in the error of a store that cannot be made.
func Test[S any](suite string, checks []Check[S], newStore func() (S, error)) error {
	var errs []error
	for _, c := range checks {
		s, err := newStore()
		if err != nil {
			return fmt.Errorf("%s: %s: new store: %w", suite, c.Name, err)
		}
		r := &recorder{name: c.Name}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Run(r, s)
		}()
		<-done
		errs = append(errs, r.errs...)
	}
	return errors.Join(errs...)
}

// recorder collects a check's failures for Test. Fatal and Fatalf end the
// check's goroutine, as they end a test.
type recorder struct {
	name string
	mu   sync.Mutex
	errs []error
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Errorf("%s: %s", r.name, fmt.Sprintf(format, args...)))
}

func (r *recorder) Fatal(args ...any) {
	r.Errorf("%s", fmt.Sprint(args...))
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
