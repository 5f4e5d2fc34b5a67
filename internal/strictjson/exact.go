package strictjson

import "reflect"

// Exact reports whether Check cannot fail on an object whose keys are
// among keys and whose values hold no object (strings, numbers, booleans
// and arrays of them): no key of keys matches a field of the root struct
// only when case is ignored. Such an object decodes into the type with
// Unmarshal alone. Below the root no object is reached, so nothing below
// it can fail.
func (f *Fields) Exact(keys []string) bool {
	if f == nil || f.root.kind != reflect.Struct {
		return true
	}
	for _, k := range keys {
		if _, ok := f.root.fields[k]; ok {
			continue
		}
		if f.root.folded[fold(k)] != nil {
			return false
		}
	}
	return true
}
