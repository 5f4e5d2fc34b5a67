package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// ServeStdio serves newline-delimited JSON-RPC on in and out until in ends
// or ctx is cancelled. Requests run concurrently; a
// notifications/cancelled naming a request cancels its context and no
// response is written for it.
//
// At end of input, listen streams (and a legacy session) end, requests
// still running finish and their responses are written, and ServeStdio
// returns nil. Cancelling ctx cancels every request and returns ctx.Err()
// at once; a read still blocked in in is abandoned, and its goroutine ends
// when in returns.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	// Listen streams never end by themselves: end of input ends them.
	listenCtx, endListens := context.WithCancel(ctx)
	t := &stdioConn{out: out, inflight: make(map[string]context.CancelFunc), listenCtx: listenCtx}
	var (
		legacy era.StdioSession
		wg     sync.WaitGroup
	)
	finish := func() {
		endListens()
		if legacy != nil {
			legacy.Close()
		}
		wg.Wait()
	}

	type read struct {
		line []byte
		err  error
	}
	lines := make(chan read)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(br, s.opts.MaxRequestBytes)
			select {
			case lines <- read{line, err}:
			case <-ctx.Done():
				return
			}
			if err != nil && !errors.Is(err, errLineTooLong) {
				return
			}
		}
	}()

	for {
		var r read
		select {
		case <-ctx.Done():
			cancelAll()
			finish()
			return ctx.Err()
		case r = <-lines:
		}
		if len(bytes.TrimSpace(r.line)) > 0 {
			s.stdioMessage(ctx, t, &wg, &legacy, r.line)
		}
		switch {
		case r.err == nil:
		case errors.Is(r.err, errLineTooLong):
			t.write(mustError(mcp.ID{}, mcp.Errorf(mcp.InvalidRequest, "message exceeds the %d-byte limit", s.opts.MaxRequestBytes)))
		case errors.Is(r.err, io.EOF):
			finish()
			return nil
		default:
			finish()
			return fmt.Errorf("stdio: read: %w", r.err)
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most max bytes. A longer line is consumed
// and reported as errLineTooLong.
func readLine(br *bufio.Reader, max int64) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if int64(len(line)+len(chunk)) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errLineTooLong
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if tooLong {
				return nil, errLineTooLong
			}
			return line, err
		}
	}
}

type stdioConn struct {
	mu        sync.Mutex
	out       io.Writer
	imu       sync.Mutex
	inflight  map[string]context.CancelFunc
	listenCtx context.Context
}

func (t *stdioConn) write(b []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("stdio: write: %w", err)
	}
	return nil
}

func mustError(id mcp.ID, e *mcp.Error) []byte {
	b, _ := rpcwire.AppendError(nil, id, e)
	return b
}

// stdioNotifier sends one request's notifications until it is answered.
type stdioNotifier struct {
	t    *stdioConn
	mu   sync.Mutex
	done bool
}

func (n *stdioNotifier) Notify(ctx context.Context, method string, params any) error {
	b, err := rpcwire.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done || ctx.Err() != nil {
		return errStreamClosed
	}
	return n.t.write(b)
}

func (n *stdioNotifier) close() {
	n.mu.Lock()
	n.done = true
	n.mu.Unlock()
}

func (s *Server) stdioMessage(ctx context.Context, t *stdioConn, wg *sync.WaitGroup, legacy *era.StdioSession, line []byte) {
	msg, derr := rpcwire.Decode(line, s.jsonLimits())
	if derr != nil {
		var id mcp.ID
		if msg != nil {
			id = msg.ID
		}
		t.write(mustError(id, derr))
		return
	}
	if *legacy == nil && msg.Method == "initialize" && !hasModernMeta(msg.Params) {
		if s.legacy != nil {
			*legacy = s.legacy.NewStdioSession(ctx)
		} else {
			t.write(mustError(msg.ID, s.initializeRefusal(msg)))
			return
		}
	}
	if *legacy != nil && !hasModernMeta(msg.Params) {
		(*legacy).HandleMessage(ctx, msg, t.write)
		return
	}
	switch {
	case msg.IsResponse():
		return // modern servers send no requests; nothing to match
	case msg.IsNotification():
		if msg.Method == "notifications/cancelled" {
			t.cancelled(msg.Params)
		}
		return
	}
	req, e := decodeRequest(msg)
	if e == nil {
		e = s.checkVersion(req.meta.ProtocolVersion)
	}
	if e != nil {
		t.write(mustError(msg.ID, e))
		return
	}
	key := msg.ID.String()
	t.imu.Lock()
	if _, dup := t.inflight[key]; dup {
		t.imu.Unlock()
		t.write(mustError(msg.ID, mcp.Errorf(mcp.InvalidRequest, "request id %s is already in use", clip.String(key))))
		return
	}
	parent := ctx
	if req.method == "subscriptions/listen" {
		parent = t.listenCtx
	}
	rctx, cancel := context.WithCancel(parent)
	t.inflight[key] = cancel
	t.imu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			t.imu.Lock()
			delete(t.inflight, key)
			t.imu.Unlock()
			cancel()
		}()
		s.stdioServe(rctx, t, msg.ID, req)
	}()
}

// cancelled cancels the request a notifications/cancelled names, if it is
// in flight.
func (t *stdioConn) cancelled(params []byte) {
	var p struct {
		RequestID mcp.ID `json:"requestId"`
	}
	if strictjson.Unmarshal(params, &p) == nil && !p.RequestID.IsZero() {
		t.imu.Lock()
		if cancel, ok := t.inflight[p.RequestID.String()]; ok {
			cancel()
		}
		t.imu.Unlock()
	}
}

// stdioServe serves one decoded request of a stdio connection and writes
// its response (none when it was cancelled).
func (s *Server) stdioServe(rctx context.Context, t *stdioConn, id mcp.ID, req *request) {
	if req.method == "subscriptions/listen" {
		_, e := s.intercept(rctx, s.methodRequest(rctx, req), func(ctx context.Context) ([]byte, resultNote, *mcp.Error) {
			f, e := s.agreeFilter(req)
			if e != nil {
				return nil, resultNote{}, e
			}
			l, _, e := s.openListener(f, listenOwner(ctx, "stdio"))
			if e != nil {
				return nil, resultNote{}, e
			}
			s.listen(ctx, id, f, l, t.write, nil)
			return []byte{}, resultNote{}, nil
		})
		if e != nil {
			t.write(mustError(id, e))
		}
		return
	}
	n := &stdioNotifier{t: t}
	res, e := s.handle(rctx, req, n)
	n.close()
	if rctx.Err() != nil || e == errNoResponse {
		return
	}
	if e != nil {
		t.write(mustError(id, e))
		return
	}
	t.write(rpcwire.AppendResult(nil, id, res))
}
