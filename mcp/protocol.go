package mcp

// ProtocolVersion is the protocol revision of the stateless lifecycle:
// every request declares it in its _meta.
const ProtocolVersion = "2026-07-28"

// LegacyProtocolVersion is the latest revision of the session lifecycle
// (initialize, Mcp-Session-Id, server-to-client requests), which Baton's
// legacy adapter serves.
const LegacyProtocolVersion = "2025-11-25"

// TasksExtension is the identifier of the tasks extension (SEP-2663) in
// capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Implementation identifies a client or server: a server's own is sent in
// every result's _meta as "io.modelcontextprotocol/serverInfo", a client's
// arrives as "io.modelcontextprotocol/clientInfo". Both are self-reported;
// never base a decision on them.
type Implementation struct {
	// Name is the program's name, for machines ("name", required).
	Name string `json:"name"`
	// Version is the program's version ("version", required).
	Version string `json:"version"`
	// Title is a name for people ("title"); omitted when empty.
	Title string `json:"title,omitempty"`
	// Description says what the program is ("description"); omitted when
	// empty.
	Description string `json:"description,omitempty"`
	// WebsiteURL is the program's home page, sent as "websiteUrl";
	// omitted when empty.
	WebsiteURL string `json:"websiteUrl,omitempty"`
	// Icons are images a client may show for the program ("icons");
	// omitted when empty.
	Icons []Icon `json:"icons,omitempty"`
}

// TaskStatus is the status of a task.
type TaskStatus string

// The statuses of a task. Completed, failed and cancelled are terminal: a
// task that reached one never leaves it.
const (
	// TaskWorking: the work is in progress.
	TaskWorking TaskStatus = "working"
	// TaskInputRequired: the work waits for the answers to its input
	// requests.
	TaskInputRequired TaskStatus = "input_required"
	// TaskCompleted: the work finished with a result (a tool result,
	// isError included).
	TaskCompleted TaskStatus = "completed"
	// TaskFailed: the work ended in a JSON-RPC error, or was lost (its
	// instance died, or it outlived its time to live).
	TaskFailed TaskStatus = "failed"
	// TaskCancelled: the client cancelled the task.
	TaskCancelled TaskStatus = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Valid reports whether s is one of the five statuses.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
		return true
	}
	return false
}
