package oauth

import (
	"io"
	"net/http"
	"net/url"
)

// maxStepUps bounds how often one request is retried after 403
// insufficient_scope: a server that keeps asking for more is refused,
// not obeyed forever.
const maxStepUps = 2

// Wrap returns a transport that sends every request to the server with
// `Authorization: Bearer` and the client's token. On a 401 it gets a new
// token (a refresh, or client credentials) and sends the request once
// more; on a 403 insufficient_scope it asks for the scope the server
// names (at most [maxStepUps] times). So the call that met an expired or
// revoked token is not lost: it comes back answered, or fails with a
// [*LoginError] naming the command to run. Requests to another origin
// than the server's pass without the token.
func (c *Client) Wrap(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	u, _ := url.Parse(c.opts.Server.URL)
	return &transport{c: c, next: next, origin: u}
}

type transport struct {
	c      *Client
	next   http.RoundTripper
	origin *url.URL
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.origin == nil || !sameOrigin(t.origin, req.URL) {
		return t.next.RoundTrip(req)
	}
	ctx := req.Context()
	tok, err := t.c.Token(ctx)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.send(req, tok, false)
	refreshed, stepUps := false, 0
	for err == nil {
		switch {
		case resp.StatusCode == http.StatusUnauthorized && !refreshed && replayable(req):
			drain(resp)
			if tok, err = t.c.refused(ctx, tok); err != nil {
				return nil, err
			}
			refreshed = true
		case resp.StatusCode == http.StatusUnauthorized && refreshed:
			// A token just issued is refused too: the grant is no good
			// for this server any more.
			drain(resp)
			return nil, t.c.withWebLogin(ctx, t.c.loginError("the server refused a freshly issued token"))
		case resp.StatusCode == http.StatusForbidden && stepUps < maxStepUps && replayable(req):
			ch, ok := ParseChallenge(resp.Header)
			if !ok || ch.Error != "insufficient_scope" {
				return resp, nil
			}
			drain(resp)
			if tok, err = t.c.stepUp(ctx, ch); err != nil {
				return nil, err
			}
			stepUps++
		default:
			return resp, nil
		}
		resp, err = t.send(req, tok, true)
	}
	return nil, err
}

// send sends req (again: with a fresh copy of its body) with tok. The
// caller's request is never changed (the RoundTripper contract).
func (t *transport) send(req *http.Request, tok string, again bool) (*http.Response, error) {
	r := req.Clone(req.Context())
	if again && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	r.Header.Set("Authorization", "Bearer "+tok)
	return t.next.RoundTrip(r)
}

// replayable reports whether req can be sent again: no body, or one that
// can be had again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
