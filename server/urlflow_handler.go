package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"unicode"
)

// urlPage is one of the pages the callback handler answers a browser with.
type urlPage struct {
	// Status is the HTTP status.
	Status int
	// Title and Text say what happened, in plain words.
	Title, Text string
}

// The pages, by what happened. Their text never holds a token, a code or
// an internal error.
var (
	urlPageInvalid     = urlPage{http.StatusBadRequest, "This link is not valid", "The link is incomplete or has been altered. Nothing was changed. Ask your assistant for a new link."}
	urlPageUnknown     = urlPage{http.StatusNotFound, "This link is unknown", "This link does not exist or has expired long ago. Nothing was changed. Ask your assistant for a new link."}
	urlPageExpired     = urlPage{http.StatusGone, "This link has expired", "The link was valid for a limited time only. Nothing was changed. Ask your assistant again to get a new link."}
	urlPageUsed        = urlPage{http.StatusConflict, "This link has already been used", "A link works once. Nothing was changed. If you did not use it yourself, tell your administrator."}
	urlPageSignIn      = urlPage{http.StatusUnauthorized, "Please sign in first", "Sign in to this application in this browser with the account you use with your assistant, then open the link again."}
	urlPageWrongUser   = urlPage{http.StatusForbidden, "This link belongs to another account", "The link was issued to a different user than the one signed in here. Nothing was changed. Sign in with the account you use with your assistant, or ask it for a new link."}
	urlPageDenied      = urlPage{http.StatusOK, "Access was not granted", "The other service reported that access was not granted. Nothing was connected. Your assistant will be told."}
	urlPageFailed      = urlPage{http.StatusBadGateway, "Could not finish", "The other service's answer could not be used. Nothing was connected. Your assistant will be told; try again later."}
	urlPageDone        = urlPage{http.StatusOK, "Done", "You can close this page and return to your assistant."}
	urlPageUnavailable = urlPage{http.StatusServiceUnavailable, "Try again in a moment", "The service is busy. Nothing was changed. Open the link again in a moment."}
	urlPageMethod      = urlPage{http.StatusMethodNotAllowed, "Not allowed", "Open the link in a browser."}
)

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="referrer" content="no-referrer"><title>{{.Title}}</title>
<style>body{font-family:sans-serif;max-width:36em;margin:4em auto;padding:0 1em;line-height:1.5}h1{font-size:1.4em}</style>
</head><body><h1 id="title">{{.Title}}</h1><p id="text">{{.Text}}</p>{{if .Ref}}<p><small>Reference: {{.Ref}}</small></p>{{end}}</body></html>
`))

// Handler returns the http.Handler to mount at URLFlowConfig.BaseURL's path. It
// serves GET …/start (the link the client received: it checks the link
// and the signed-in user, then redirects to URLFlowConfig.Begin's URL) and GET
// …/callback (where the third party returns: it checks again, claims the
// link once, runs URLFlowConfig.Complete and records the outcome).
func (f *URLFlow) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "DENY")
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			f.page(w, r, urlPageMethod, "", "method not allowed")
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/start"):
			f.start(w, r)
		case strings.HasSuffix(r.URL.Path, "/callback"):
			f.callback(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

// check verifies a link token and the browser's user: caps, signature,
// then the store, then the user. It writes the refusal page and returns
// false when any fails.
func (f *URLFlow) check(w http.ResponseWriter, r *http.Request, tok string) (*URLFlowRecord, bool) {
	if len(r.URL.RawQuery) > 4096 {
		f.page(w, r, urlPageInvalid, "", "query too long")
		return nil, false
	}
	id, ok := f.verify(tok)
	if !ok {
		f.page(w, r, urlPageInvalid, "", "link signature does not verify")
		return nil, false
	}
	rec, err := f.get(r.Context(), id)
	switch {
	case errors.Is(err, ErrURLLinkNotFound):
		f.page(w, r, urlPageUnknown, id, "link not in the store")
		return nil, false
	case err != nil:
		f.pageErr(w, r, urlPageUnavailable, id, "store failure", err)
		return nil, false
	}
	if rec.State != URLLinkPending {
		f.page(w, r, urlPageUsed, id, "link reused")
		return nil, false
	}
	if f.expired(rec.Expires) {
		f.page(w, r, urlPageExpired, id, "link expired")
		return nil, false
	}
	user, err := f.cfg.Identify(r)
	if err != nil || user == "" {
		f.page(w, r, urlPageSignIn, id, "no signed-in user")
		return nil, false
	}
	if user != rec.Principal {
		f.page(w, r, urlPageWrongUser, id, "link opened by a different user", "user", principalRef(user), "principal", principalRef(rec.Principal))
		return nil, false
	}
	return &rec, true
}

func (f *URLFlow) start(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("l")
	rec, ok := f.check(w, r, tok)
	if !ok {
		return
	}
	l := &URLLink{ID: rec.ID, Principal: rec.Principal, Purpose: rec.Purpose, Expires: rec.Expires, token: tok}
	target, err := f.cfg.Begin(r.Context(), l)
	if err != nil {
		f.pageErr(w, r, urlPageUnavailable, rec.ID, "begin failed", err)
		return
	}
	f.cfg.Logger.Info("urlflow: link opened", "link", rec.ID, "principal", principalRef(rec.Principal))
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (f *URLFlow) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	tok := q.Get("state")
	rec, ok := f.check(w, r, tok)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.cfg.StoreTimeout)
	claimed, err := f.cfg.Store.Claim(ctx, rec.ID)
	cancel()
	switch {
	case errors.Is(err, ErrURLLinkUsed) || errors.Is(err, ErrURLLinkNotFound):
		f.page(w, r, urlPageUsed, rec.ID, "link reused (lost the claim)")
		return
	case err != nil:
		f.pageErr(w, r, urlPageUnavailable, rec.ID, "store failure", err)
		return
	}
	l := &URLLink{ID: claimed.ID, Principal: claimed.Principal, Purpose: claimed.Purpose, Expires: claimed.Expires, token: tok}
	var out URLOutcome
	pg := urlPageDone
	ref := ""
	if code := q.Get("error"); code != "" {
		out = URLOutcome{Error: "the other service did not grant access: " + printable(code, 64)}
		pg = urlPageDenied
		f.cfg.Logger.Info("urlflow: the third party answered an error", "link", l.ID, "error", printable(code, 64), "description", printable(q.Get("error_description"), 200))
	} else {
		out, err = f.cfg.Complete(r.Context(), l, r)
		if err != nil {
			ref = newRef()
			out = URLOutcome{Error: "the other service's answer could not be used (reference " + ref + ")"}
			pg = urlPageFailed
			f.cfg.Logger.Error("urlflow: completion failed", "link", l.ID, "ref", ref, "err", err)
		}
		out.OK = err == nil
	}
	out.At = f.cfg.Now().UTC()
	ctx, cancel = context.WithTimeout(context.WithoutCancel(r.Context()), f.cfg.StoreTimeout)
	err = f.cfg.Store.Finish(ctx, l.ID, out)
	cancel()
	if err != nil {
		f.pageErr(w, r, urlPageUnavailable, l.ID, "store failure recording the outcome", err)
		return
	}
	f.cfg.Logger.Info("urlflow: link completed", "link", l.ID, "principal", principalRef(l.Principal), "ok", out.OK)
	f.render(w, pg, ref)
}

func (f *URLFlow) page(w http.ResponseWriter, r *http.Request, p urlPage, id, reason string, attrs ...any) {
	args := append([]any{"status", p.Status, "reason", reason, "link", id, "remote", r.RemoteAddr}, attrs...)
	f.cfg.Logger.Warn("urlflow: link refused", args...)
	f.render(w, p, "")
}

func (f *URLFlow) pageErr(w http.ResponseWriter, r *http.Request, p urlPage, id, reason string, err error) {
	ref := newRef()
	f.cfg.Logger.Error("urlflow: "+reason, "link", id, "ref", ref, "remote", r.RemoteAddr, "err", err)
	f.render(w, p, ref)
}

func (f *URLFlow) render(w http.ResponseWriter, p urlPage, ref string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(p.Status)
	_ = pageTmpl.Execute(w, struct {
		Title, Text, Ref string
	}{p.Title, p.Text, ref})
}

func newRef() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// printable keeps the first n bytes of s with anything but printable
// ASCII replaced, for logs and outcomes.
func printable(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.Map(func(r rune) rune {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}
