// Command everything is Baton's example server. It exposes every fixture the
// official MCP conformance suite calls (server.go lists the files, grouped
// by what they show), plus three realistic tools: confirm_transfer, which
// asks the user to confirm a transfer and redeems the confirmation once;
// onboard_user, which asks a name, then an email; and book_table, a typed
// tool that asks a date, then a confirmation, and answers with structured
// content.
//
// Usage:
//
//	cd examples && go run ./everything [-addr 127.0.0.1:8080] [-state-ttl 10m] [-stdio]
//	    [-task-ttl 1h] [-task-lease 15s] [-session-idle 30m] [-trusted-proxy CIDR,...]
//	    [-store-timeout 5s] [-drain-timeout 25s]
//
// everything -h lists the flags and the environment variables (usage.go).
//
// It serves http://ADDR/mcp, or newline-delimited JSON-RPC on stdin and
// stdout with -stdio. The requestState key comes from BATON_STATE_KEY (at
// least 32 bytes); instances that share it finish each other's flows.
// Without it a random key is made for the process, with a warning. With
// BATON_REDIS_URL set, confirmations are redeemed once across the instances
// that share that Redis (without it, once per process only), and tasks (the
// tasks extension) are kept in Redis, so that any instance answers tasks/get
// and tasks/update or tasks/cancel reach the instance running the task, and
// so are 2025-11-25 sessions, so that any instance serves a session and a
// client's answer to a server request reaches the instance whose call asked
// it. -trusted-proxy names the proxies whose X-Forwarded-For gives the
// client address that anonymous clients' session and task quotas count.
// On SIGTERM the server stops gracefully within -drain-timeout
// (server.Serve): running tasks and parked calls finish, listen streams
// close, new connections, tasks and sessions go to other instances, and
// the HTTP server closes once the proxy holds no idle connection to it.
//
// To rotate the key, start each instance with the new key in
// BATON_STATE_KEY and the previous ones, comma-separated, in
// BATON_STATE_KEYS_OLD: new state is signed with the new key, state signed
// with an old key still verifies. Drop an old key once the state it signed
// has expired (-state-ttl after the last instance stopped signing with it).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "everything:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8080", "HTTP listen address (HOST:PORT)")
	ttl := flag.Duration("state-ttl", 10*time.Minute, "how long a requestState stays valid")
	stdio := flag.Bool("stdio", false, "serve JSON-RPC on stdin/stdout instead of HTTP")
	taskTTL := flag.Duration("task-ttl", time.Hour, "how long a task (the tasks extension) lives from its creation")
	taskLease := flag.Duration("task-lease", 15*time.Second, "how long an instance vouches for its running tasks without renewing; a dead instance's tasks fail once it lapses")
	sessionIdle := flag.Duration("session-idle", 0, "how long a 2025-11-25 session may go unused before it expires (0: the library's default, 30m)")
	trusted := flag.String("trusted-proxy", "", "comma-separated CIDR prefixes of proxies whose X-Forwarded-For is believed for the quotas of anonymous clients (2025-11-25 sessions, tasks)")
	storeTimeout := flag.Duration("store-timeout", 0, "the longest one call to Redis (tasks, ledger, fan-out) may take before the request is refused with 503 (0: the library's default, 5s)")
	drainTimeout := flag.Duration("drain-timeout", 25*time.Second, "on SIGTERM, how long running tasks, parked 2025-11-25 calls and requests may take to finish before what remains is failed")
	flag.Usage = func() { usage(flag.CommandLine.Output(), flag.CommandLine) }
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	keys, err := stateKeysFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	if keys != nil {
		log.Info("requestState keys", "signing", keys.SigningKeyID(), "verifying", strings.Join(keys.IDs(), ","))
	}
	fleet, err := fleetFromEnv(os.Getenv("BATON_REDIS_URL"), os.Getenv("BATON_REDIS_CLUSTER"))
	if err != nil {
		return err
	}
	var (
		ledger   server.Ledger
		sessions legacy.Store
		taskOpts = server.TaskOptions{TTL: *taskTTL, Lease: *taskLease}
	)
	if fleet != nil {
		ledger, taskOpts.Store, sessions = fleet.Ledger(), fleet.Tasks(), fleet.Sessions()
	}
	proxies, err := parsePrefixes(*trusted)
	if err != nil {
		return err
	}
	legacyOpts := &legacy.Options{Store: sessions, SessionIdle: *sessionIdle, TrustedProxies: proxies}
	srv, err := newServerWith(keys, *ttl, ledger, taskOpts, legacyOpts, log,
		func(o *server.Options) { o.StoreTimeout, o.TrustedProxies = *storeTimeout, proxies })
	if err != nil {
		return err
	}
	defer srv.Close()
	mountAuthorize, err := setupAuthorize(srv, keys, os.Getenv, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *stdio {
		// The scope fixtures' full grant (scope_fixtures.go): stdio has
		// no tokens.
		return srv.ServeStdio(server.ContextWithGrant(ctx, &server.Grant{Scopes: fullScopes()}), os.Stdin, os.Stdout)
	}
	return serveHTTP(ctx, srv, *addr, *drainTimeout, log, mountAuthorize)
}

// fleetFromEnv returns the Redis-backed parts of a fleet when
// BATON_REDIS_URL is set (redis://host:port/db or unix:///path): a ledger,
// so that a confirmation is redeemed once across all the instances that
// share it, and the task and 2025-11-25 session stores they share.
// With BATON_REDIS_CLUSTER (the comma-separated addresses of some nodes of
// a Redis Cluster) instead, the same on the cluster. Otherwise it returns
// nil: each process keeps its own.
func fleetFromEnv(url, cluster string) (*redisfleet.Fleet, error) {
	if cluster != "" {
		if url != "" {
			return nil, errors.New("BATON_REDIS_URL and BATON_REDIS_CLUSTER are both set: choose one")
		}
		var addrs []string
		for _, a := range strings.Split(cluster, ",") {
			if a = strings.TrimSpace(a); a != "" {
				addrs = append(addrs, a)
			}
		}
		if len(addrs) == 0 {
			return nil, errors.New("BATON_REDIS_CLUSTER names no address")
		}
		// Options.StoreTimeout bounds each call.
		return redisfleet.New(redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true}), redisfleet.Options{Prefix: "baton:"}), nil
	}
	if url == "" {
		return nil, nil
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("BATON_REDIS_URL: %w", err)
	}
	opts.ContextTimeoutEnabled = true // Options.StoreTimeout bounds each call
	return redisfleet.New(redis.NewClient(opts), redisfleet.Options{Prefix: "baton:"}), nil
}

// parsePrefixes reads comma-separated CIDR prefixes (a bare address is
// one host).
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("-trusted-proxy: %w", err)
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("-trusted-proxy: %w", err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// stateKeysFromEnv builds the key ring from BATON_STATE_KEY and
// BATON_STATE_KEYS_OLD, read with getenv.
func stateKeysFromEnv(getenv func(string) string) (*mrtr.KeyRing, error) {
	return stateKeyRing(getenv("BATON_STATE_KEY"), getenv("BATON_STATE_KEYS_OLD"))
}

// stateKeys builds the key ring from BATON_STATE_KEY alone. An empty value
// means no ring (the server makes a random key and warns).
func stateKeys(secret string) (*mrtr.KeyRing, error) {
	return stateKeyRing(secret, "")
}

// stateKeyRing builds the key ring from BATON_STATE_KEY (the signing key)
// and BATON_STATE_KEYS_OLD (older keys, comma-separated, kept to verify
// state they signed), the signing key first. Each key ID is derived from
// the key, so every instance given the same keys names them the same way.
// Blanks around an old key are trimmed and empty entries skipped; an old
// key equal to the signing key or to an earlier one is listed once. Old
// keys without a signing key are refused: the ring needs one to sign.
// With neither there is no ring (the server makes a random key and warns).
func stateKeyRing(secret, old string) (*mrtr.KeyRing, error) {
	var olds []string
	for _, k := range strings.Split(old, ",") {
		if k = strings.TrimSpace(k); k != "" {
			olds = append(olds, k)
		}
	}
	if secret == "" {
		if len(olds) > 0 {
			return nil, errors.New("BATON_STATE_KEYS_OLD is set but BATON_STATE_KEY is not: old keys only verify, a signing key is required")
		}
		return nil, nil
	}
	if len(secret) < mrtr.MinKeySize {
		return nil, fmt.Errorf("BATON_STATE_KEY is %d bytes; at least %d are required", len(secret), mrtr.MinKeySize)
	}
	keys := []mrtr.Key{stateKey(secret)}
	seen := map[string]bool{keys[0].ID: true}
	for i, k := range olds {
		if len(k) < mrtr.MinKeySize {
			return nil, fmt.Errorf("BATON_STATE_KEYS_OLD: key %d is %d bytes; at least %d are required", i+1, len(k), mrtr.MinKeySize)
		}
		key := stateKey(k)
		if seen[key.ID] {
			continue
		}
		seen[key.ID] = true
		keys = append(keys, key)
	}
	return mrtr.NewKeyRing(keys...)
}

// stateKey names a secret by a digest of it: "k-" and the first 6 bytes of
// its SHA-256, in hex.
func stateKey(secret string) mrtr.Key {
	sum := sha256.Sum256([]byte(secret))
	return mrtr.Key{ID: "k-" + hex.EncodeToString(sum[:6]), Secret: []byte(secret)}
}

func serveHTTP(ctx context.Context, srv *server.Server, addr string, drain time.Duration, log *slog.Logger, mounts ...func(*echo.Echo)) error {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	for _, m := range mounts {
		if m != nil {
			m(e)
		}
	}
	mountMCP(e, "/mcp", withScopeFixtures(srv))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	hs := &http.Server{
		Handler: e,
		// A client must send its headers within 10 s; a slow-header
		// (Slowloris) connection is cut.
		ReadHeaderTimeout: 10 * time.Second,
		// Bodies are bounded by server.Options.BodyReadTimeout (30 s by
		// default), a deadline set per request and cleared once the body
		// is read. ReadTimeout stays unset: net/http keeps it on the
		// connection for the whole request, and when it passes during a
		// long-lived response (a subscriptions/listen stream, a call
		// streaming progress as SSE) the request's context is cancelled.
		// WriteTimeout stays unset for the same reason: it would cut
		// those streams mid-way (idle ones get a keep-alive comment every
		// 25 s and are meant to stay open).
		// Keep-alive connections that carry no request close after 2
		// minutes: above the idle timeout of the proxy's pooled
		// connections (examples/fleet's nginx: 2 s), so that the proxy,
		// not this server, closes them.
		IdleTimeout: 2 * time.Minute,
	}
	log.Info("serving MCP", "url", "http://"+ln.Addr().String()+"/mcp")
	// On SIGTERM (ctx ends), Serve stops gracefully, within drain: it
	// closes the listener (nginx retries new connections elsewhere),
	// drains the MCP server (no new tasks, sessions or listen streams;
	// every response says Connection: close, so nginx drops its pooled
	// connections cleanly; 2025-11-25 streams of calls still running are
	// resumed on other instances while the calls finish here), waits
	// until nginx holds no idle connection to this instance, then runs
	// http.Server.Shutdown and closes the server.
	if err := srv.Serve(ctx, hs, ln, drain); err != nil {
		return err
	}
	log.Info("shut down")
	return nil
}
