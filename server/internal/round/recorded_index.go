package round

// recordedIndexScan is the number of recorded answers up to which a key
// missing the expected position is looked for by a scan, and
// recordedIndexMisses the number of misses scanned for with more; after
// them a table is built once. A handler replaying in order misses once
// per round, for the new question it asks.
const (
	recordedIndexScan   = 8
	recordedIndexMisses = 4
)

// recordedIndex returns the index in the verified state's answers of the
// one recorded under key, or -1. A handler replaying from the top asks
// the recorded questions in the order they were recorded, so the lookup
// is one comparison with the answer expected next; a question asked out
// of that order is found by a scan of a few answers, or in a table built
// once for many. The state is sealed by the server, which records each
// key once. r.mu is held.
func (r *Round) recordedIndex(key string) int {
	if r.state == nil || len(r.state.Answers) == 0 {
		return -1
	}
	ans := r.state.Answers
	if r.handed == nil {
		r.handed = make([]bool, len(ans))
	}
	if i := int(r.recNext); i < len(ans) && ans[i].Key == key {
		r.recNext++
		return i
	}
	i := -1
	if r.recIndex == nil && (len(ans) <= recordedIndexScan || r.recMisses < recordedIndexMisses) {
		r.recMisses++
		for j := range ans {
			if ans[j].Key == key {
				i = j
				break
			}
		}
	} else {
		if r.recIndex == nil {
			r.recIndex = make(map[string]int, len(ans))
			for j := len(ans) - 1; j >= 0; j-- { // the first of a key wins, as in the scan
				r.recIndex[ans[j].Key] = j
			}
		}
		if j, ok := r.recIndex[key]; ok {
			i = j
		}
	}
	if i >= 0 {
		r.recNext = int32(i + 1)
	}
	return i
}

// Recorded is the number of answers the verified state carries.
func (r *Round) Recorded() int {
	if r.state == nil {
		return 0
	}
	return len(r.state.Answers)
}
