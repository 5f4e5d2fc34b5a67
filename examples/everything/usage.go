package main

import (
	"flag"
	"fmt"
	"io"
)

// envVars are the environment variables the command reads, with what
// each means: -h lists them after the flags.
var envVars = []struct{ name, meaning string }{
	{"BATON_STATE_KEY", "the key that signs and encrypts requestState (at least 32 bytes); instances that share it finish each other's flows. " +
		"Unset: a random key per process, with a warning"},
	{"BATON_STATE_KEYS_OLD", "previous keys, comma-separated, that still verify the state they signed while it lives (key rotation); " +
		"needs BATON_STATE_KEY"},
	{"BATON_REDIS_URL", "redis://host:port/db or unix:///path: share single-use confirmations, tasks and 2025-11-25 sessions " +
		"with every instance on that Redis. Unset: each process keeps its own"},
	{"BATON_REDIS_CLUSTER", "host:port,host:port,...: some nodes of a Redis Cluster, to share the same on the cluster instead " +
		"(not with BATON_REDIS_URL)"},
}

// usage writes the command's help: how to run it, its flags, then its
// environment variables.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: everything [flags]\n\nServes Baton's example MCP server on http://ADDR/mcp (or stdio with -stdio).\n\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintf(w, "\nEnvironment:\n")
	for _, v := range envVars {
		fmt.Fprintf(w, "  %s\n    \t%s\n", v.name, v.meaning)
	}
}
