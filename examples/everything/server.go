package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// The example server is the official conformance suite's fixtures, grouped
// by what they show, plus three realistic tools. Each file holds one group,
// and each fixture says which conformance scenario calls it and what the
// scenario checks:
//
//	tool_fixtures.go      tools that return content, stream notifications,
//	                      carry a rich schema or change the tool and prompt lists
//	mrtr_fixtures.go      multi round-trip requests: input_required results and retries
//	legacy_fixtures.go    the fixtures of the 2025-11-25 requirements
//	prompt_fixtures.go    prompts and completion
//	resource_fixtures.go  resources and a resource template
//	task_fixtures.go      the tasks extension
//	transfer.go           confirm_transfer: a confirmation redeemed once
//	onboard.go            onboard_user: two questions in sequence
//	book_table.go         book_table: a typed tool, two questions, a structured result
//	ask_fixtures.go       open_dashboard (a URL elicitation) and a resource that asks
//	skills.go             the skills of skills/ (SEP-2640)

// newServer builds the example server with every fixture registered and a
// confirmation ledger for this process.
func newServer(keys *mrtr.KeyRing, ttl time.Duration, log *slog.Logger) (*server.Server, error) {
	return newServerWithLedger(keys, ttl, nil, log)
}

// newServerWithLedger is newServer with the ledger that redeems
// confirmations once (nil: one for this process; share one, such as
// Redis, across instances).
func newServerWithLedger(keys *mrtr.KeyRing, ttl time.Duration, ledger server.Ledger, log *slog.Logger) (*server.Server, error) {
	return newServerWith(keys, ttl, ledger, server.TaskOptions{}, nil, log)
}

// newServerWith is newServerWithLedger with the options of the tasks
// extension: the store that keeps tasks (nil: this process's memory; share
// one, such as Redis, across instances), their TTL and lease; more adjust
// the server's options (the store timeout, the trusted proxies).
func newServerWith(keys *mrtr.KeyRing, ttl time.Duration, ledger server.Ledger, taskOpts server.TaskOptions, legacyOpts *legacy.Options, log *slog.Logger, more ...func(*server.Options)) (*server.Server, error) {
	if ledger == nil {
		ledger = server.NewMemoryLedger(nil)
	}
	opts := &server.Options{
		Instructions: "Baton's example server: the conformance fixtures and a transfer that asks for confirmation.",
		StateKeys:    keys,
		StateTTL:     ttl,
		Logging:      true,
		Logger:       log,
		Tasks:        taskOpts,
		Legacy:       legacy.New(legacyOpts), // 2025-11-25 clients on the same endpoint
	}
	for _, f := range more {
		f(opts)
	}
	srv, err := server.New(mcp.Implementation{Name: "baton-everything", Version: "0.1.0"}, opts)
	if err != nil {
		return nil, err
	}
	// In this order: the lists show tools, prompts and resources in the
	// order they were added.
	for _, add := range []func(*server.Server) error{
		addToolFixtures,
		addMRTRFixtures,
		addPromptFixtures,
		addResourceFixtures,
		func(srv *server.Server) error { return addTransfer(srv, ledger) },
		addOnboarding,
		addLegacyFixtures,
		addTaskFixtures,
		addBookTable,
		addAskFixtures,
		addSkills,
	} {
		if err := add(srv); err != nil {
			srv.Close()
			return nil, err
		}
	}
	srv.SetCompletion(complete)
	return srv, nil
}

// A toolFixture is a tool with a hand-written input schema and its
// handler, as the fixture tables list them.
type toolFixture struct {
	tool    server.Tool
	handler server.ToolHandler
	opts    []server.ToolOption
}

// addTools registers tools in order, stopping at the first failure.
func addTools(srv *server.Server, tools []toolFixture) error {
	for _, t := range tools {
		if err := srv.AddTool(t.tool, t.handler, t.opts...); err != nil {
			return err
		}
	}
	return nil
}

// noArgs describes a tool that takes no arguments.
func noArgs(name, description string) server.Tool {
	return server.Tool{Name: name, Description: description, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
