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
