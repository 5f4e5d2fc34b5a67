package server

// PendingInputs is TaskRecord.pending, for the external tests.
func PendingInputs(r *TaskRecord) []TaskInput { return r.pending() }
