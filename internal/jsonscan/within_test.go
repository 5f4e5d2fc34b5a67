package jsonscan_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
)

// within runs SkipValueWithin over data as a whole document nested in
// depth open levels, with lim's limits, and reports whether it takes it.
func within(data []byte, lim rpcwire.Limits, depth int) bool {
	l := lim.WithDefaults()
	jl := jsonscan.Limits{MaxDepth: l.MaxDepth, MaxMembers: l.MaxMembers, MaxNumberLength: l.MaxNumberLength, MaxNumberExponent: l.MaxNumberExponent}
	end, ok := jsonscan.SkipValueWithin(data, 0, &jl, depth)
	return ok && jsonscan.SkipSpace(data, end) == len(data)
}

// checkWithin holds SkipValueWithin to json.Valid and rpcwire.CheckLimits:
// it takes exactly the valid documents within the limits, the depth levels
// open around it counted (as arrays wrapped around the document; the
// caller has checked those levels, so there are at most MaxDepth).
func checkWithin(t *testing.T, data []byte, lim rpcwire.Limits, depth int) {
	t.Helper()
	if depth > lim.WithDefaults().MaxDepth {
		return // the levels open around a value are within the limit
	}
	wrapped := strings.Repeat("[", depth) + string(data) + strings.Repeat("]", depth)
	want := json.Valid(data) && rpcwire.CheckLimits([]byte(wrapped), lim) == nil
	if got := within(data, lim, depth); got != want {
		t.Fatalf("SkipValueWithin(depth %d, %+v) takes it: %v; json.Valid and CheckLimits: %v: %q", depth, lim, got, want, data)
	}
}

func TestSkipValueWithin(t *testing.T) {
	for _, tc := range []struct {
		doc   string
		lim   rpcwire.Limits
		depth int
		want  bool
	}{
		{`{"a":[1,{"b":null}]}`, rpcwire.Limits{MaxDepth: 3}, 0, true},
		{`{"a":[1,{"b":null}]}`, rpcwire.Limits{MaxDepth: 2}, 0, false},
		{`{"a":[1,{"b":null}]}`, rpcwire.Limits{MaxDepth: 3}, 1, false},
		{`{"a":1,"b":2}`, rpcwire.Limits{MaxMembers: 2}, 0, true},
		{`{"a":1,"b":2,"c":3}`, rpcwire.Limits{MaxMembers: 2}, 0, false},
		{`[1,2,3,4,5]`, rpcwire.Limits{MaxMembers: 2}, 0, true},
		{`[12345]`, rpcwire.Limits{MaxNumberLength: 5}, 0, true},
		{`[-12345]`, rpcwire.Limits{MaxNumberLength: 5}, 0, false},
		{`1e400`, rpcwire.Limits{}, 0, true},
		{`1E+401`, rpcwire.Limits{}, 0, false},
		{`1e-00000401`, rpcwire.Limits{}, 0, false},
		{`"1e999"`, rpcwire.Limits{}, 0, true},
		{`{"a":1,}`, rpcwire.Limits{}, 0, false},
	} {
		if got := within([]byte(tc.doc), tc.lim, tc.depth); got != tc.want {
			t.Errorf("SkipValueWithin(%s, %+v, depth %d) = %v, want %v", tc.doc, tc.lim, tc.depth, got, tc.want)
		}
		checkWithin(t, []byte(tc.doc), tc.lim, tc.depth)
	}
}

// FuzzSkipValueWithin: SkipValueWithin's verdict is json.Valid's and
// CheckLimits's together, for small limits (so the fuzzer reaches them)
// and the defaults (seeds: here and testdata/fuzz/FuzzSkipValueWithin).
func FuzzSkipValueWithin(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":null}],"c":"\u00e9"}`, `[1,2.5e3,-0,1e-401]`, `{"a":1,"b":2,"c":3}`, `[123456789]`, `{"a":1,}`} {
		f.Add([]byte(s), uint8(3), uint8(2), uint8(5), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, depth, members, numLen, exp uint8) {
		small := rpcwire.Limits{MaxDepth: int(depth%8) + 1, MaxMembers: int(members%8) + 1, MaxNumberLength: int(numLen%12) + 1, MaxNumberExponent: int(exp % 12)}
		for d := 0; d < 3; d++ {
			checkWithin(t, data, small, d)
			checkWithin(t, data, rpcwire.Limits{}, d)
		}
	})
}
