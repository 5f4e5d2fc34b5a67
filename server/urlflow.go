package server

import (
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mrtr"
)

// URLFallback is the policy for a client that did not declare
// elicitation.url. The default refuses the call with -32021
// (requiredCapabilities: elicitation.url), which says what is missing.
type URLFallback int

const (
	// URLFallbackRefuse answers a client without URL mode with the server's
	// -32021 error naming the missing capability (the default).
	URLFallbackRefuse URLFallback = iota
	// URLFallbackForm asks a form elicitation whose message names the link
	// and asks the user to confirm, with a checkbox, once they have
	// finished there. A client without form mode either is refused as
	// with URLFallbackRefuse.
	URLFallbackForm
	// URLFallbackToolResult ends the call with a *URLPendingError whose text
	// says what to open and to call the tool again when done; the call
	// again (same principal, same arguments) finds the link.
	URLFallbackToolResult
)

// URLFlowConfig configures a URLFlow.
type URLFlowConfig struct {
	// Keys derive the key that signs links (HKDF over each key of the
	// ring: links signed with an older key verify while it stays in the
	// ring). Every instance needs the same ring, as for requestState.
	Keys *mrtr.KeyRing
	// Store keeps links and completions; nil means NewMemoryURLFlowStore
	// (one instance only). A fleet shares one, such as redisfleet's URLFlow().
	Store URLFlowStore
	// BaseURL is the absolute URL where Handler is mounted, such as
	// "https://app.example/connect". Links are BaseURL+"/start?l=…" and
	// the third party returns to BaseURL+"/callback".
	BaseURL string
	// TTL is how long a link stays usable (default 10 minutes).
	TTL time.Duration
	// Leeway is added to every expiry check, for clock skew between
	// instances (default 30 seconds).
	Leeway time.Duration
	// MaxPending caps the pending links of one principal (default 20).
	MaxPending int
	// MaxRounds caps the input_required rounds of one flow on the
	// 2026-07-28 protocol (default 30); past it the call fails.
	MaxRounds int
	// StoreTimeout bounds each store call (default 5 seconds).
	StoreTimeout time.Duration
	// Identify returns the subject signed in in the browser that opened
	// the link (for example from the application's session cookie), or
	// "" when nobody is signed in. It must be tamper-proof: the link
	// completes only when it equals the principal it was minted for.
	Identify func(r *http.Request) (string, error)
	// Begin returns the third party's URL the browser is sent to (for an
	// OAuth authorization request, with state = l.State()). It runs after
	// the link and the browser's user are verified.
	Begin func(ctx context.Context, l *URLLink) (string, error)
	// Complete runs on the callback, after the link and the user are
	// verified and the link is claimed: it exchanges what the third party
	// returned (an OAuth code) and keeps any secret on the server, bound
	// to l.Principal. The URLOutcome's Detail reaches the handler; an error
	// is logged and recorded as a failed outcome with a log reference.
	// The third party's own error (an OAuth "error" parameter) never
	// reaches it: the flow records it itself.
	Complete func(ctx context.Context, l *URLLink, r *http.Request) (URLOutcome, error)
	// Fallback is the policy for clients without elicitation.url.
	Fallback URLFallback
	// LegacyRequiredError makes a 2025-11-25 call end with error -32042
	// (URLElicitationRequiredError, built from the link) instead of
	// waiting on an elicitation; the client calls again once the user is
	// done. Never used on 2026-07-28.
	LegacyRequiredError bool
	// Logger receives a line per link minted, refused or completed
	// (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// URLFlow mints links, serves their callback and waits for completions.
type URLFlow struct {
	cfg  URLFlowConfig
	macs [][]byte // one per key of the ring, signing key first
	base *url.URL
}

// NewURLFlow checks cfg and returns a URLFlow.
func NewURLFlow(cfg URLFlowConfig) (*URLFlow, error) {
	if cfg.Keys == nil {
		return nil, errors.New("urlflow: Config.Keys is required")
	}
	if cfg.Identify == nil || cfg.Begin == nil || cfg.Complete == nil {
		return nil, errors.New("urlflow: Config.Identify, Begin and Complete are required")
	}
	base, err := url.Parse(strings.TrimSuffix(cfg.BaseURL, "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" || base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("urlflow: Config.BaseURL %q must be an absolute http(s) URL without query", cfg.BaseURL)
	}
	if cfg.Store == nil {
		cfg.Store = NewMemoryURLFlowStore(cfg.Now)
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 10 * time.Minute
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 20
	}
	if cfg.MaxRounds <= 0 {
		cfg.MaxRounds = 30
	}
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Now = wallClock(cfg.Now)
	f := &URLFlow{cfg: cfg, base: base}
	for _, k := range cfg.Keys.Keys() {
		mk, err := hkdf.Key(sha256.New, k.Secret, nil, "baton urlflow link v1", 32)
		if err != nil {
			return nil, fmt.Errorf("urlflow: derive link key: %w", err)
		}
		f.macs = append(f.macs, mk)
	}
	return f, nil
}

// URLLink is a minted link as the application's Begin and Complete see it.
type URLLink struct {
	// ID is the link's id; on 2025-11-25 it is the elicitationId too.
	ID string
	// Principal is the subject the link was minted for.
	Principal string
	// Purpose is the label given in URLFlowAsk.
	Purpose string
	// Expires is the link's expiry.
	Expires time.Time

	token string
}

// State is the value to pass to the third party as OAuth state: the
// signed link token, which the callback verifies.
func (l *URLLink) State() string { return l.token }

// URLFlowAsk describes one URL flow of a handler.
type URLFlowAsk struct {
	// Target is the tool or prompt name, or the resource URI.
	Target string
	// Arguments are the call's arguments, as sent (bound by digest).
	Arguments json.RawMessage
	// Message tells the user what the page is for.
	Message string
	// Purpose is a short, non-secret label kept with the link.
	Purpose string
}

// Errors of Await.
var (
	// ErrURLDeclined: the user declined or cancelled opening the link.
	ErrURLDeclined = errors.New("the user did not open the link")
	// ErrURLExpired: the link expired before its callback came. Call again
	// for a new one.
	ErrURLExpired = errors.New("the link expired before the flow was completed; call again for a new link")
)

// URLPendingError is the URLFallbackToolResult answer: returned by a tool, it
// becomes an isError result whose text says what to open.
type URLPendingError struct {
	// URL is the link.
	URL string
	// Message is URLFlowAsk.Message.
	Message string
}

// Error says what to open and to call again.
func (e *URLPendingError) Error() string {
	return e.Message + " Your client cannot open links itself: open " + e.URL +
		" in a browser, finish there, then call this tool again with the same arguments."
}

// AwaitTool is Await for a tool call: the target is the tool's name and
// the arguments are bound as sent.
func (f *URLFlow) AwaitTool(ctx context.Context, req *ToolRequest, message, purpose string) (*URLOutcome, error) {
	return f.Await(ctx, req.Call, URLFlowAsk{Target: req.Name, Arguments: req.Arguments, Message: message, Purpose: purpose})
}

// Await sends the user to a link bound to this call's principal and
// arguments, and returns the flow's outcome once its callback came (on
// any instance). On 2026-07-28 it returns an error wrapping
// mrtr.ErrInputRequired (return it) until then: every round asks the same
// link again. On 2025-11-25 it waits (the call stays parked), sends
// notifications/elicitation/complete when the callback came, and returns.
// It returns ErrURLDeclined, ErrURLExpired, a *URLPendingError
// (URLFallbackToolResult), a *URLElicitationRequiredError
// (LegacyRequiredError) or the client's refusal.
func (f *URLFlow) Await(ctx context.Context, c *Call, a URLFlowAsk) (*URLOutcome, error) {
	if c == nil {
		return nil, errors.New("urlflow: nil call")
	}
	if a.Message == "" {
		return nil, errors.New("urlflow: Ask.Message is required")
	}
	principal := c.Principal()
	if principal == "" {
		// Nobody could prove in a browser to be the caller.
		return nil, errors.New("urlflow: the call is anonymous: sign in first, a link is bound to a signed-in user")
	}
	binding := urlBinding(c.Method, a.Target, a.Arguments)
	legacy := c.Meta.ProtocolVersion != "" && c.Meta.ProtocolVersion < "2026-07-28"

	rec, fromState, err := f.find(ctx, c, principal, binding)
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.State == URLLinkDone {
		if fromState || rec.Outcome.OK {
			return rec.Outcome, nil
		}
		rec = nil // a failed flow of an earlier call: this call starts afresh
	}
	if rec != nil && f.expired(rec.Expires) {
		if fromState {
			return nil, ErrURLExpired
		}
		rec = nil // an old link of an earlier call: mint a new one
	}
	if rec == nil {
		if rec, err = f.mint(ctx, principal, binding, a.Purpose); err != nil {
			return nil, err
		}
	}
	if !legacy {
		if err := c.SaveState(savedState{Link: rec.ID}); err != nil {
			return nil, fmt.Errorf("urlflow: save the link in the state: %w", err)
		}
	}
	link := f.linkURL(rec.ID)
	caps := c.Capabilities()
	switch {
	case caps.CanElicitURL() && legacy && f.cfg.LegacyRequiredError:
		return nil, &URLElicitationRequiredError{Message: a.Message, Elicitations: []*elicit.Request{
			{Mode: elicit.ModeURL, Message: a.Message, URL: link, ElicitationID: rec.ID},
		}}
	case caps.CanElicitURL():
		ask := func(k int) (*elicit.Result, error) {
			return c.CreateURLElicitation(ctx, rec.ID, a.Message, link, WithKey(fmt.Sprintf("urlflow-%d", k)), WithTimeout(f.until(rec.Expires)))
		}
		return f.rounds(ctx, c, rec, legacy, ask)
	case f.cfg.Fallback == URLFallbackForm && caps.CanElicitForm():
		schema, err := elicit.NewSchema(elicit.Boolean("done").Title("I have finished on that page").Required())
		if err != nil {
			return nil, err
		}
		msg := a.Message + " Open " + link + " in a browser, finish there, then confirm here."
		ask := func(k int) (*elicit.Result, error) {
			return c.CreateFormElicitation(ctx, msg, schema, WithKey(fmt.Sprintf("urlflow-%d", k)), WithTimeout(f.until(rec.Expires)))
		}
		return f.rounds(ctx, c, rec, legacy, ask)
	case f.cfg.Fallback == URLFallbackToolResult:
		return nil, &URLPendingError{URL: link, Message: a.Message}
	default:
		// The server's own refusal: -32021 naming elicitation.url.
		_, err := c.CreateURLElicitation(ctx, rec.ID, a.Message, link)
		if err == nil {
			err = errors.New("urlflow: the client cannot open links")
		}
		return nil, err
	}
}

// rounds asks with ask until the flow is done: on 2026-07-28 through one
// new question per round, on 2025-11-25 by waiting on the store after the
// user accepted.
func (f *URLFlow) rounds(ctx context.Context, c *Call, rec *URLFlowRecord, legacy bool, ask func(int) (*elicit.Result, error)) (*URLOutcome, error) {
	for k := 1; k <= f.cfg.MaxRounds; k++ {
		res, err := ask(k)
		if err != nil {
			return nil, err // input_required on 2026-07-28, or the client's failure
		}
		if res.Action != elicit.ActionAccept {
			return nil, ErrURLDeclined
		}
		if !legacy {
			continue // accepted in an earlier round, and not done yet (checked above): ask again
		}
		out, done, err := f.wait(ctx, rec)
		if err != nil {
			return nil, err
		}
		if done {
			if err := c.NotifyElicitationComplete(ctx, rec.ID); err != nil {
				f.cfg.Logger.Warn("urlflow: notifications/elicitation/complete failed", "link", rec.ID, "err", err)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("urlflow: the link was offered %d times without being completed; call again later", f.cfg.MaxRounds)
}

// wait blocks until the link is done (true), its expiry passes (ErrURLExpired)
// or ctx ends.
func (f *URLFlow) wait(ctx context.Context, rec *URLFlowRecord) (*URLOutcome, bool, error) {
	wctx, cancel := context.WithDeadline(ctx, rec.Expires.Add(f.cfg.Leeway))
	defer cancel()
	for {
		err := f.cfg.Store.Wait(wctx, rec.ID)
		r, gerr := f.get(ctx, rec.ID)
		if gerr == nil && r.State == URLLinkDone {
			return r.Outcome, true, nil
		}
		switch {
		case ctx.Err() != nil:
			return nil, false, ctx.Err()
		case wctx.Err() != nil || errors.Is(err, ErrURLLinkNotFound) || errors.Is(gerr, ErrURLLinkNotFound):
			return nil, false, ErrURLExpired
		case err != nil:
			return nil, false, fmt.Errorf("urlflow: wait for the link: %w", err)
		}
	}
}

type savedState struct {
	Link string `json:"urlflowLink"`
}

// find returns the call's link: from its requestState, else the newest
// link of the same principal and call.
func (f *URLFlow) find(ctx context.Context, c *Call, principal, binding string) (*URLFlowRecord, bool, error) {
	var st savedState
	fromState := false
	id := ""
	if ok, err := c.LoadState(&st); err == nil && ok && st.Link != "" {
		id, fromState = st.Link, true
	} else {
		sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
		defer cancel()
		found, err := f.cfg.Store.Lookup(sctx, principal, binding)
		switch {
		case errors.Is(err, ErrURLLinkNotFound):
			return nil, false, nil
		case err != nil:
			return nil, false, fmt.Errorf("urlflow: look up the link: %w", err)
		}
		id = found
	}
	rec, err := f.get(ctx, id)
	switch {
	case errors.Is(err, ErrURLLinkNotFound) && fromState:
		return nil, false, ErrURLExpired
	case errors.Is(err, ErrURLLinkNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("urlflow: read the link: %w", err)
	}
	if rec.Principal != principal || rec.Binding != binding {
		return nil, false, errors.New("urlflow: the link belongs to another call")
	}
	return &rec, fromState, nil
}

func (f *URLFlow) get(ctx context.Context, id string) (URLFlowRecord, error) {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	return f.cfg.Store.Get(sctx, id)
}

func (f *URLFlow) mint(ctx context.Context, principal, binding, purpose string) (*URLFlowRecord, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("urlflow: random link id: %w", err)
	}
	rec := URLFlowRecord{
		ID:        base64.RawURLEncoding.EncodeToString(b[:]),
		Principal: principal,
		Binding:   binding,
		Purpose:   purpose,
		Expires:   f.cfg.Now().Add(f.cfg.TTL).UTC(),
		State:     URLLinkPending,
	}
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	// Kept past its expiry for as long again, so that a retry after the
	// callback still finds the outcome.
	if err := f.cfg.Store.Create(sctx, rec, f.cfg.MaxPending, 2*f.cfg.TTL+f.cfg.Leeway); err != nil {
		if errors.Is(err, ErrURLLinkQuota) {
			return nil, fmt.Errorf("%w: finish or let expire the links already sent", err)
		}
		return nil, fmt.Errorf("urlflow: store the link: %w", err)
	}
	f.cfg.Logger.Info("urlflow: link minted", "link", rec.ID, "principal", principalRef(principal), "purpose", purpose, "expires", rec.Expires)
	return &rec, nil
}

func (f *URLFlow) expired(exp time.Time) bool { return !f.cfg.Now().Before(exp.Add(f.cfg.Leeway)) }

func (f *URLFlow) until(exp time.Time) time.Duration {
	d := exp.Add(f.cfg.Leeway).Sub(f.cfg.Now())
	return max(d, time.Second)
}

// token is the link id and its tag: HMAC-SHA256 under the signing key,
// cut to 128 bits.
func (f *URLFlow) token(id string) string { return id + "." + tag(f.macs[0], id) }

func tag(key []byte, id string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("link\x00" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// verify returns the id of a token whose tag any key of the ring made.
func (f *URLFlow) verify(tok string) (string, bool) {
	if len(tok) > 64 {
		return "", false
	}
	id, t, ok := strings.Cut(tok, ".")
	if !ok || len(id) != 22 || len(t) != 22 {
		return "", false
	}
	for _, k := range f.macs {
		if hmac.Equal([]byte(tag(k, id)), []byte(t)) {
			return id, true
		}
	}
	return "", false
}

func (f *URLFlow) linkURL(id string) string {
	u := *f.base
	u.Path += "/start"
	u.RawQuery = url.Values{"l": {f.token(id)}}.Encode()
	return u.String()
}

// CallbackURL is where the third party must send the browser back (the
// OAuth redirect_uri): BaseURL+"/callback".
func (f *URLFlow) CallbackURL() string {
	u := *f.base
	u.Path += "/callback"
	return u.String()
}

// urlBinding is the digest a link binds a call by: SHA-256 over the method,
// the target and the arguments in canonical JSON (object keys sorted,
// insignificant space dropped), in hex.
func urlBinding(method, target string, args json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(method + "\x00" + target + "\x00"))
	var v any
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if d.Decode(&v) == nil {
		canon, _ := json.Marshal(v) // maps marshal with sorted keys
		h.Write(canon)
	} else {
		h.Write(args)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// principalRef names a principal in logs without writing it out.
func principalRef(p string) string {
	if p == "" {
		return "anonymous"
	}
	sum := sha256.Sum256([]byte(p))
	return "p-" + hex.EncodeToString(sum[:6])
}
