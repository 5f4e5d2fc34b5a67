package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/strictjson"
)

// CreateMessageParams are the params of sampling/createMessage: what the
// server asks the client's model. The client decides which model runs, and
// may show or change the request before it does.
type CreateMessageParams struct {
	// Messages is the conversation to continue ("messages", required,
	// at least one).
	Messages []SamplingMessage `json:"messages"`
	// ModelPreferences say what matters in choosing a model
	// ("modelPreferences"); omitted when nil.
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	// SystemPrompt is the system prompt the server asks for
	// ("systemPrompt"); the client may change or ignore it. Omitted when
	// empty.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// IncludeContext asks the client to add context from its MCP servers
	// ("includeContext"): "none", "thisServer" or "allServers" (the last
	// two are deprecated and need the sampling.context capability).
	// Omitted when empty, which means "none".
	IncludeContext string `json:"includeContext,omitempty"`
	// Temperature is the sampling temperature ("temperature"); omitted
	// when nil (the client's choice).
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens is the most tokens the model may generate ("maxTokens",
	// required, positive).
	MaxTokens int `json:"maxTokens"`
	// StopSequences end generation when the model produces one
	// ("stopSequences"); omitted when empty.
	StopSequences []string `json:"stopSequences,omitempty"`
	// Metadata is passed to the model's provider as is ("metadata");
	// omitted when empty.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Tools are the tools the model may call, each a tool definition as
	// tools/list describes one ("tools"; needs the sampling.tools
	// capability). Omitted when empty.
	Tools []json.RawMessage `json:"tools,omitempty"`
	// ToolChoice says whether the model must, may or must not call a tool
	// ("toolChoice"; needs sampling.tools). Omitted when nil.
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
}

// Validate checks the sampling request.
func (p *CreateMessageParams) Validate() error {
	if len(p.Messages) == 0 {
		return errors.New("no messages")
	}
	if p.MaxTokens <= 0 {
		return fmt.Errorf("maxTokens must be positive, got %d", p.MaxTokens)
	}
	for i, m := range p.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return fmt.Errorf("message %d: role %q is neither user nor assistant", i, m.Role)
		}
		if len(m.Content) == 0 {
			return fmt.Errorf("message %d: no content", i)
		}
	}
	switch p.IncludeContext {
	case "", "none", "thisServer", "allServers":
	default:
		return fmt.Errorf("includeContext %q is not none, thisServer or allServers", p.IncludeContext)
	}
	return nil
}

// ModelPreferences guide the client's model choice. The priorities are
// numbers from 0 (unimportant) to 1 (most important); a nil one is
// omitted.
type ModelPreferences struct {
	// Hints name model families to prefer, in order ("hints"); the client
	// may map them to models of its own. Omitted when empty.
	Hints []ModelHint `json:"hints,omitempty"`
	// CostPriority is how much a cheap model matters ("costPriority").
	CostPriority *float64 `json:"costPriority,omitempty"`
	// SpeedPriority is how much a fast model matters ("speedPriority").
	SpeedPriority *float64 `json:"speedPriority,omitempty"`
	// IntelligencePriority is how much a capable model matters
	// ("intelligencePriority").
	IntelligencePriority *float64 `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model family.
type ModelHint struct {
	// Name is all or part of a model name, such as "claude-3-5-sonnet"
	// or "sonnet" ("name"); omitted when empty.
	Name string `json:"name,omitempty"`
}

// ToolChoice says how a sampled model may use tools.
type ToolChoice struct {
	// Mode is "auto" (the model decides), "required" (it must call a
	// tool) or "none" (it must not) ("mode"); omitted when empty, which
	// means "auto".
	Mode string `json:"mode,omitempty"`
}

// SamplingMessage is one message of a sampling conversation, sent as
// {"role": ..., "content": ...}: its content is a single block object when
// it holds one block, an array of blocks otherwise.
type SamplingMessage struct {
	// Role is who speaks: "user" or "assistant" ("role").
	Role Role
	// Content holds the message's blocks ("content"): text, image, audio,
	// and in a conversation with tools, tool_use and tool_result blocks.
	Content []Block
}

// UserText returns a user message holding text.
func UserText(text string) SamplingMessage {
	return SamplingMessage{Role: RoleUser, Content: []Block{Text(text)}}
}

type samplingMessageWire struct {
	Role    Role            `json:"role"`
	Content json.RawMessage `json:"content"`
}

// MarshalJSON writes one block as an object and several as an array.
func (m SamplingMessage) MarshalJSON() ([]byte, error) {
	c, err := marshalBlocks(m.Content)
	if err != nil {
		return nil, err
	}
	return json.Marshal(samplingMessageWire{Role: m.Role, Content: c})
}

// UnmarshalJSON reads either content form.
func (m *SamplingMessage) UnmarshalJSON(data []byte) error {
	var w samplingMessageWire
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("sampling message: %w", err)
	}
	blocks, err := unmarshalBlocks(w.Content)
	if err != nil {
		return fmt.Errorf("sampling message: %w", err)
	}
	*m = SamplingMessage{Role: w.Role, Content: blocks}
	return nil
}

// CreateMessageResult is the client's answer to a sampling request, sent
// as {"role": ..., "content": ..., "model": ..., "stopReason": ...}.
type CreateMessageResult struct {
	// Role is who speaks the answer, usually "assistant" ("role").
	Role Role
	// Content holds the answer's blocks ("content": one block object, or
	// an array of several); at least one.
	Content []Block
	// Model names the model that answered ("model", required).
	Model string
	// StopReason says why generation stopped ("stopReason"), for example
	// "endTurn", "stopSequence", "maxTokens" or "toolUse"; omitted when
	// empty.
	StopReason string
}

// Text returns the concatenated text of the result's text blocks.
func (r *CreateMessageResult) Text() string {
	var sb strings.Builder
	for _, b := range r.Content {
		if b.Type == BlockText {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

type createMessageResultWire struct {
	Role       Role            `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
}

// MarshalJSON writes the result.
func (r CreateMessageResult) MarshalJSON() ([]byte, error) {
	c, err := marshalBlocks(r.Content)
	if err != nil {
		return nil, err
	}
	return json.Marshal(createMessageResultWire{r.Role, c, r.Model, r.StopReason})
}

// ParseCreateMessageResult reads and checks a sampling answer.
func ParseCreateMessageResult(data []byte) (*CreateMessageResult, error) {
	if err := requireObject(data); err != nil {
		return nil, fmt.Errorf("sampling result: %w", err)
	}
	var w createMessageResultWire
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("sampling result: %w", err)
	}
	if w.Role != RoleUser && w.Role != RoleAssistant {
		return nil, fmt.Errorf("sampling result: role %s is neither user nor assistant", clip.Quote(string(w.Role)))
	}
	if w.Model == "" {
		return nil, errors.New(`sampling result: missing "model"`)
	}
	blocks, err := unmarshalBlocks(w.Content)
	if err != nil {
		return nil, fmt.Errorf("sampling result: %w", err)
	}
	if len(blocks) == 0 {
		return nil, errors.New("sampling result: no content")
	}
	return &CreateMessageResult{Role: w.Role, Content: blocks, Model: w.Model, StopReason: w.StopReason}, nil
}

func marshalBlocks(bs []Block) (json.RawMessage, error) {
	if len(bs) == 1 {
		return json.Marshal(bs[0])
	}
	if bs == nil {
		bs = []Block{}
	}
	return json.Marshal(bs)
}

func unmarshalBlocks(data json.RawMessage) ([]Block, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New(`missing "content"`)
	}
	if data[0] == '[' {
		var bs []Block
		if err := strictjson.Unmarshal(data, &bs); err != nil {
			return nil, err
		}
		return bs, nil
	}
	var b Block
	if err := strictjson.Unmarshal(data, &b); err != nil {
		return nil, err
	}
	return []Block{b}, nil
}

func requireObject(data []byte) error {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("expected a JSON object, got %s", describeJSON(t))
	}
	return nil
}

func describeJSON(t []byte) string {
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
