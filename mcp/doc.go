// Package mcp is the wire vocabulary that servers and clients share.
//
// Content: text, image and audio blocks, resource links and embedded
// resources (Block), and the resource contents a resources/read returns
// (ResourceContents), with their Role, Annotations and Icon. A Block is a
// plain struct whose Type says which fields count; the constructors (Text,
// Image, Audio, Link, Embedded) fill the right ones, and MarshalJSON writes
// exactly the members that type defines, so a text block with empty text
// still carries "text":"".
//
// The client as a server sees it: the capabilities it declares on each
// request (ClientCapabilities), and the two kinds of question besides
// elicitation that a server may ask it: sampling its model
// (CreateMessageParams, answered by a CreateMessageResult) and listing its
// roots (answered by a ListRootsResult). Elicitation, the third, has its own
// package, elicit.
//
// On the 2026-07-28 protocol these questions travel inside an
// input_required result; on a 2025-11-25 session they are real requests to
// the client. Handlers ask them through the methods of server.Call either
// way; this package holds the vocabulary both share.
//
// JSON-RPC 2.0, as a handler meets it: the error type with the MCP error
// codes (return a *Error to choose the code the client sees, or build one
// with Errorf), and request ids (ID). The framing (reading and writing
// messages, the limits pre-scan) is internal to Baton.
//
// It is at the bottom of Baton's import graph: every other Baton package
// may use it and it uses none of them.
package mcp
