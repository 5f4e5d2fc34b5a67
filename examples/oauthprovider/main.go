// Command oauthprovider is a stand-in third-party OAuth 2.0 / OpenID
// Connect provider for trying URL-mode elicitation (docs/url-elicitation.md):
// zitadel/oidc's example OpenID Provider (package op, with its in-memory
// storage and its sign-in page) on a loopback port, with one confidential
// web client whose redirect URI is the Baton server's urlflow callback.
//
//	cd examples && go run ./oauthprovider -addr 127.0.0.1:9998 \
//	    -redirect http://127.0.0.1:8080/connect/callback
//
// Its users are zitadel's examples: "test-user@HOST" (HOST is the issuer's
// host, 127.0.0.1 here) and "test-user2", both with password "verysecure".
// It is a demonstration and a test fixture, not a production provider.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9998", "listen address (HOST:PORT; port 0 picks one)")
	redirect := flag.String("redirect", "", "the client's redirect URI(s), comma-separated (required)")
	clientID := flag.String("client-id", "baton", "the web client's id")
	secret := flag.String("client-secret", "baton-secret", "the web client's secret")
	flag.Parse()
	if *redirect == "" {
		fmt.Fprintln(os.Stderr, "oauthprovider: -redirect is required")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "oauthprovider:", err)
		os.Exit(1)
	}
	issuer := "http://" + ln.Addr().String() + "/"
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	storage.RegisterClients(storage.WebClient(*clientID, *secret, strings.Split(*redirect, ",")...))
	router := exampleop.SetupServer(issuer, storage.NewStorage(storage.NewUserStore(issuer)), log, false)
	log.Info("serving OAuth", "issuer", issuer)
	hs := &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second}
	if err := hs.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "oauthprovider:", err)
		os.Exit(1)
	}
}
