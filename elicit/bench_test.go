package elicit

import "testing"

// BenchmarkCheckResult measures parsing and validating an accepted answer
// against a cached, compiled schema.
func BenchmarkCheckResult(b *testing.B) {
	form := testForm(b)
	answer := []byte(`{"action":"accept","content":{"name":"Ann","email":"ann@example.com","day":"2024-02-29","guests":4,"budget":12.5,"terrace":true,"size":"m","color":"#f00","diet":["vegan"],"extras":["cake","wine"]}}`)
	if _, err := form.CheckResult(answer); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := form.CheckResult(answer); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigest measures fingerprinting a form request.
func BenchmarkDigest(b *testing.B) {
	form := testForm(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = form.Digest()
	}
}

// BenchmarkCheckResultPlain measures answers checkFast passes: a
// confirmation (one boolean) and a form of every kind without a format or
// a fraction.
func BenchmarkCheckResultPlain(b *testing.B) {
	forms := fastForms(b)
	for _, bc := range []struct {
		name   string
		form   *Request
		answer string
	}{
		{"confirm", forms[0], `{"action":"accept","content":{"ok":true}}`},
		{"kinds", forms[1], `{"action":"accept","content":{"name":"Ann","n":-3,"big":123456789012345,"x":1,"y":-7,"ok":false,"size":"m","color":"g","legacy":"b","tags":["c","a"],"extras":["x"]}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			answer := []byte(bc.answer)
			if _, ok := bc.form.checkFast(answer); !ok {
				b.Fatal("checkFast does not pass the answer")
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.form.CheckResult(answer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
