package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/baton-mcp/baton/internal/jsonw"
	"github.com/baton-mcp/baton/internal/strictjson"
)

// Block types: the values of Block.Type.
const (
	BlockText         = "text"
	BlockImage        = "image"
	BlockAudio        = "audio"
	BlockResourceLink = "resource_link"
	BlockResource     = "resource"
	BlockToolUse      = "tool_use"
	BlockToolResult   = "tool_result"
)

// Role is the speaker of a prompt or sampling message.
type Role string

// The two roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations are optional hints about how a block or resource is used
// ("annotations"). An empty member is omitted.
type Annotations struct {
	// Audience says who the item is meant for, "user", "assistant" or
	// both ("audience").
	Audience []Role `json:"audience,omitempty"`
	// Priority is how important the item is, from 0 (least: entirely
	// optional) to 1 (most: effectively required) ("priority").
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is when the item was last modified, an ISO 8601
	// timestamp such as "2026-07-28T09:14:28Z" ("lastModified").
	LastModified string `json:"lastModified,omitempty"`
}

// Icon is an image a client may show next to a tool, prompt or resource.
type Icon struct {
	// Src is the image's location ("src", required): an https: URL or a
	// data: URI.
	Src string `json:"src"`
	// MimeType is the image's media type, such as "image/png"
	// ("mimeType"); omitted when empty.
	MimeType string `json:"mimeType,omitempty"`
	// Sizes are the sizes the image is available in, each "48x48" or
	// "any" (scalable formats such as SVG) ("sizes"); omitted when empty.
	Sizes []string `json:"sizes,omitempty"`
	// Theme is the background the icon is drawn for, "light" or "dark"
	// ("theme"); omitted when empty (any).
	Theme string `json:"theme,omitempty"`
}

// Block is one content block. Which fields are meaningful depends on Type:
//
//   - text: Text
//   - image, audio: Data (base64) and MimeType
//   - resource_link: URI, Name and optionally Title, Description, MimeType, Size
//   - resource: Resource
//   - tool_use (sampling only): ID, Name, Input
//   - tool_result (sampling only): ToolUseID, Content, IsError
//
// On the wire a block is an object holding "type" and the members of that
// type, under the JSON names each field gives; optional members are omitted
// when empty.
type Block struct {
	// Type is the block's kind ("type"): one of the Type constants.
	Type string
	// Text is the text of a text block ("text"; sent even when empty).
	Text string
	// Data is the base64-encoded bytes of an image or audio block
	// ("data").
	Data string
	// MimeType is the media type of an image or audio block (required),
	// or of a resource_link's target (optional) ("mimeType").
	MimeType string
	// URI is a resource_link's target ("uri").
	URI string
	// Name is a resource_link's name ("name"), or the tool a tool_use
	// block calls.
	Name string
	// Title is a resource_link's name for people ("title").
	Title string
	// Description says what a resource_link points at ("description").
	Description string
	// Size is a resource_link's size in bytes ("size"); omitted when nil.
	Size *int64
	// Resource is a resource block's embedded contents ("resource").
	Resource *ResourceContents
	// ID identifies a tool_use block, so that a tool_result can answer
	// it ("id").
	ID string
	// Input is a tool_use block's arguments, a JSON object ("input"; {}
	// when empty).
	Input json.RawMessage
	// ToolUseID is the id of the tool_use a tool_result answers, sent as
	// "toolUseId".
	ToolUseID string
	// Content holds a tool_result's blocks ("content"; [] when empty).
	Content []Block
	// IsError marks a tool_result as a failed call ("isError"; omitted
	// when false).
	IsError bool
	// Annotations are hints about the block's audience and priority
	// ("annotations"; not sent for tool_use and tool_result); omitted when
	// nil.
	Annotations *Annotations
	// Meta is the block's "_meta" object, sent as given; omitted when
	// empty.
	Meta map[string]any
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: BlockText, Text: s} }

// Image returns an image block holding data, base64-encoded.
func Image(data []byte, mimeType string) Block {
	return Block{Type: BlockImage, Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// Audio returns an audio block holding data, base64-encoded.
func Audio(data []byte, mimeType string) Block {
	return Block{Type: BlockAudio, Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// Link returns a resource_link block pointing at uri.
func Link(uri, name string) Block { return Block{Type: BlockResourceLink, URI: uri, Name: name} }

// Embedded returns a resource block that embeds rc.
func Embedded(rc ResourceContents) Block { return Block{Type: BlockResource, Resource: &rc} }

type textWire struct {
	Type        string         `json:"type"`
	Text        string         `json:"text"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

type dataWire struct {
	Type        string         `json:"type"`
	Data        string         `json:"data"`
	MimeType    string         `json:"mimeType"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

type linkWire struct {
	Type        string         `json:"type"`
	URI         string         `json:"uri"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MimeType    string         `json:"mimeType,omitempty"`
	Size        *int64         `json:"size,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

type resourceWire struct {
	Type        string            `json:"type"`
	Resource    *ResourceContents `json:"resource"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        map[string]any    `json:"_meta,omitempty"`
}

type toolUseWire struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Meta  map[string]any  `json:"_meta,omitempty"`
}

type toolResultWire struct {
	Type      string         `json:"type"`
	ToolUseID string         `json:"toolUseId"`
	Content   []Block        `json:"content"`
	IsError   bool           `json:"isError,omitempty"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// MarshalJSON writes the members of the block's type.
func (b Block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case BlockText:
		return json.Marshal(textWire{b.Type, b.Text, b.Annotations, b.Meta})
	case BlockImage, BlockAudio:
		return json.Marshal(dataWire{b.Type, b.Data, b.MimeType, b.Annotations, b.Meta})
	case BlockResourceLink:
		return json.Marshal(linkWire{b.Type, b.URI, b.Name, b.Title, b.Description, b.MimeType, b.Size, b.Annotations, b.Meta})
	case BlockResource:
		if b.Resource == nil {
			return nil, errors.New("content: resource block without resource")
		}
		return json.Marshal(resourceWire{b.Type, b.Resource, b.Annotations, b.Meta})
	case BlockToolUse:
		in := b.Input
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		return json.Marshal(toolUseWire{b.Type, b.ID, b.Name, in, b.Meta})
	case BlockToolResult:
		c := b.Content
		if c == nil {
			c = []Block{}
		}
		return json.Marshal(toolResultWire{b.Type, b.ToolUseID, c, b.IsError, b.Meta})
	default:
		return nil, fmt.Errorf("content: unknown block type %q", b.Type)
	}
}

type blockIn struct {
	Type        string            `json:"type"`
	Text        *string           `json:"text"`
	Data        string            `json:"data"`
	MimeType    string            `json:"mimeType"`
	URI         string            `json:"uri"`
	Name        string            `json:"name"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Size        *int64            `json:"size"`
	Resource    *ResourceContents `json:"resource"`
	ID          string            `json:"id"`
	Input       json.RawMessage   `json:"input"`
	ToolUseID   string            `json:"toolUseId"`
	Content     []Block           `json:"content"`
	IsError     bool              `json:"isError"`
	Annotations *Annotations      `json:"annotations"`
	Meta        map[string]any    `json:"_meta"`
}

// UnmarshalJSON reads a block and checks the members its type requires.
func (b *Block) UnmarshalJSON(data []byte) error {
	var in blockIn
	if err := strictjson.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("content block: %w", err)
	}
	out := Block{
		Type: in.Type, Data: in.Data, MimeType: in.MimeType, URI: in.URI, Name: in.Name,
		Title: in.Title, Description: in.Description, Size: in.Size, Resource: in.Resource,
		ID: in.ID, Input: in.Input, ToolUseID: in.ToolUseID, Content: in.Content,
		IsError: in.IsError, Annotations: in.Annotations, Meta: in.Meta,
	}
	switch in.Type {
	case BlockText:
		if in.Text == nil {
			return errors.New(`content block: text block without "text"`)
		}
		out.Text = *in.Text
	case BlockImage, BlockAudio:
		if in.Data == "" || in.MimeType == "" {
			return fmt.Errorf(`content block: %s block needs "data" and "mimeType"`, in.Type)
		}
	case BlockResourceLink:
		if in.URI == "" || in.Name == "" {
			return errors.New(`content block: resource_link needs "uri" and "name"`)
		}
	case BlockResource:
		if in.Resource == nil {
			return errors.New(`content block: resource block without "resource"`)
		}
	case BlockToolUse:
		if in.ID == "" || in.Name == "" {
			return errors.New(`content block: tool_use needs "id" and "name"`)
		}
	case BlockToolResult:
		if in.ToolUseID == "" {
			return errors.New(`content block: tool_result needs "toolUseId"`)
		}
	case "":
		return errors.New(`content block: missing "type"`)
	default:
		return fmt.Errorf("content block: unknown type %q", in.Type)
	}
	*b = out
	return nil
}

// ResourceContents is the body of a resource: text or binary. Exactly one
// of Text and Blob is meaningful; IsBlob says which. It is sent as
// {"uri": ..., "mimeType": ..., "text": ...} or, for a blob,
// {"uri": ..., "mimeType": ..., "blob": ...}.
type ResourceContents struct {
	// URI is the resource's URI ("uri", required).
	URI string
	// MimeType is the contents' media type ("mimeType"); omitted when
	// empty.
	MimeType string
	// Text is the contents of a text resource ("text"; sent, even empty,
	// when IsBlob is false).
	Text string
	// Blob is the base64-encoded contents of a binary resource ("blob";
	// sent when IsBlob is true).
	Blob string
	// IsBlob says the contents are binary: Blob is sent, not Text. It is
	// not a member on the wire; reading sets it when "blob" is present.
	IsBlob bool
	// Meta is the contents' "_meta" object, sent as given; omitted when
	// empty.
	Meta map[string]any
}

// TextContents returns text resource contents.
func TextContents(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MimeType: mimeType, Text: text}
}

// BlobContents returns binary resource contents, base64-encoding data.
func BlobContents(uri, mimeType string, data []byte) ResourceContents {
	return ResourceContents{URI: uri, MimeType: mimeType, Blob: base64.StdEncoding.EncodeToString(data), IsBlob: true}
}

type textContentsWire struct {
	URI      string         `json:"uri"`
	MimeType string         `json:"mimeType,omitempty"`
	Text     string         `json:"text"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

type blobContentsWire struct {
	URI      string         `json:"uri"`
	MimeType string         `json:"mimeType,omitempty"`
	Blob     string         `json:"blob"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

// MarshalJSON writes text or blob contents.
func (rc ResourceContents) MarshalJSON() ([]byte, error) {
	if rc.IsBlob {
		return json.Marshal(blobContentsWire{rc.URI, rc.MimeType, rc.Blob, rc.Meta})
	}
	return json.Marshal(textContentsWire{rc.URI, rc.MimeType, rc.Text, rc.Meta})
}

// UnmarshalJSON reads text or blob contents.
func (rc *ResourceContents) UnmarshalJSON(data []byte) error {
	var in struct {
		URI      string         `json:"uri"`
		MimeType string         `json:"mimeType"`
		Text     *string        `json:"text"`
		Blob     *string        `json:"blob"`
		Meta     map[string]any `json:"_meta"`
	}
	if err := strictjson.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("resource contents: %w", err)
	}
	if in.URI == "" {
		return errors.New(`resource contents: missing "uri"`)
	}
	out := ResourceContents{URI: in.URI, MimeType: in.MimeType, Meta: in.Meta}
	switch {
	case in.Text != nil && in.Blob == nil:
		out.Text = *in.Text
	case in.Blob != nil && in.Text == nil:
		out.Blob, out.IsBlob = *in.Blob, true
	default:
		return errors.New(`resource contents: exactly one of "text" and "blob" is required`)
	}
	*rc = out
	return nil
}

// AppendJSON appends the block's JSON encoding to dst. Text, image, audio,
// resource-link and embedded-resource blocks without annotations or _meta
// are written directly; anything else goes through MarshalJSON.
func (b Block) AppendJSON(dst []byte) ([]byte, error) {
	if b.Annotations != nil || b.Meta != nil {
		return appendMarshal(dst, b)
	}
	switch b.Type {
	case BlockText:
		dst = append(dst, `{"type":"text","text":`...)
		dst = jsonw.String(dst, b.Text)
		return append(dst, '}'), nil
	case BlockImage, BlockAudio:
		dst = append(dst, `{"type":`...)
		dst = jsonw.String(dst, b.Type)
		dst = append(dst, `,"data":`...)
		dst = jsonw.String(dst, b.Data)
		dst = append(dst, `,"mimeType":`...)
		dst = jsonw.String(dst, b.MimeType)
		return append(dst, '}'), nil
	case BlockResource:
		if b.Resource == nil || b.Resource.Meta != nil {
			return appendMarshal(dst, b)
		}
		dst = append(dst, `{"type":"resource","resource":`...)
		dst = b.Resource.AppendJSON(dst)
		return append(dst, '}'), nil
	default:
		return appendMarshal(dst, b)
	}
}

// AppendJSON appends the contents' JSON encoding to dst.
func (rc ResourceContents) AppendJSON(dst []byte) []byte {
	if rc.Meta != nil {
		b, err := rc.MarshalJSON()
		if err == nil {
			return append(dst, b...)
		}
	}
	dst = append(dst, `{"uri":`...)
	dst = jsonw.String(dst, rc.URI)
	if rc.MimeType != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = jsonw.String(dst, rc.MimeType)
	}
	if rc.IsBlob {
		dst = append(dst, `,"blob":`...)
		dst = jsonw.String(dst, rc.Blob)
	} else {
		dst = append(dst, `,"text":`...)
		dst = jsonw.String(dst, rc.Text)
	}
	return append(dst, '}')
}

func appendMarshal(dst []byte, v json.Marshaler) ([]byte, error) {
	b, err := v.MarshalJSON()
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}
