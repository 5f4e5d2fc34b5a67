package era

import "encoding/json"

// Change, its kinds and ServerCapabilities are the server's, here so
// that the legacy adapter can read them through the Dispatcher.

// ChangeKind says what changed.
type ChangeKind int

// The kinds of change listeners can opt in to.
const (
	ToolsChanged ChangeKind = iota + 1
	PromptsChanged
	ResourcesChanged
	ResourceUpdated
	// TaskStatusChanged: a task changed status; URI carries the task id.
	// It travels between instances through the fan-out only, to the
	// streams that listen for task notifications; a watcher never sees it.
	TaskStatusChanged
)

var kindNames = map[ChangeKind]string{
	ToolsChanged:      "tools",
	PromptsChanged:    "prompts",
	ResourcesChanged:  "resources",
	ResourceUpdated:   "resource-updated",
	TaskStatusChanged: "task",
}

// String names the kind ("tools", "prompts", "resources",
// "resource-updated").
func (k ChangeKind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return "unknown"
}

// ParseChangeKind returns the kind String names.
func ParseChangeKind(s string) (ChangeKind, bool) {
	for k, n := range kindNames {
		if n == s {
			return k, true
		}
	}
	return 0, false
}

// Change is one event for subscriptions/listen streams.
type Change struct {
	// Kind is what changed: a list, or one resource (ResourceUpdated).
	Kind ChangeKind
	// URI is the updated resource (ResourceUpdated only).
	URI string
}

// ServerCapabilities are the capabilities a server advertises, derived
// from what is registered: server/discover sends them as its
// "capabilities" (a 2025-11-25 initialize as its "capabilities" too). A
// nil member is omitted, and means the server does not offer it.
type ServerCapabilities struct {
	// Tools is sent as "tools": {"listChanged": true} while any tool is
	// registered (listChanged: subscriptions/listen reports changes).
	Tools *ListCapability `json:"tools,omitempty"`
	// Prompts is sent as "prompts": {"listChanged": true} while any prompt
	// is registered.
	Prompts *ListCapability `json:"prompts,omitempty"`
	// Resources is sent as "resources": {"subscribe": true,
	// "listChanged": true} while any resource or template is registered
	// (subscribe: subscriptions/listen can watch a resource's updates).
	Resources *ResourceCapability `json:"resources,omitempty"`
	// Completions is sent as "completions": {} while a completion handler
	// is set.
	Completions *struct{} `json:"completions,omitempty"`
	// Logging is sent as "logging": {} when Options.Logging is on (a
	// request may then set a log level and receive notifications/message).
	Logging *struct{} `json:"logging,omitempty"`
	// Extensions lists the extensions the server offers, by identifier,
	// each with its settings (the tasks extension while a tool may run as a
	// task, and those added with Server.AddExtension). server/discover sends them
	// all, a 2025-11-25 initialize those registered with Extension.Legacy.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ListCapability is a server capability over a list: tools or prompts.
type ListCapability struct {
	// ListChanged says list changes are reported ("listChanged").
	ListChanged bool `json:"listChanged"`
}

// ResourceCapability is the server's resources capability.
type ResourceCapability struct {
	// Subscribe says a resource's updates can be watched ("subscribe").
	Subscribe bool `json:"subscribe"`
	// ListChanged says list changes are reported ("listChanged").
	ListChanged bool `json:"listChanged"`
}
