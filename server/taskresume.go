package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
)

// Waiting is data.
//
// A task's handler follows the handler contract of 2026-07-28 rounds: it
// may run again from the top, and each question it asks again gets the
// answer recorded for it. So a task that asks does not keep its handler
// waiting: the question is written to the task's record (input_required,
// with no owner: Record.Owner ""), the blocking call returns an error
// wrapping mrtr.ErrInputRequired, and the handler returns (what it returns
// then is ignored). No goroutine is left on any instance, and the task
// survives the instance that ran it. The tasks/update that answers the
// last pending question claims the task for its instance in the same
// write, and that instance runs the handler again with the call recorded
// in Record.Call and the answers in Record.Inputs. An instance that reads
// an answered task no one runs (its answering instance was shutting
// down, or the task was released) claims it the same way.
//
// A task whose instance dies or shuts down while its handler runs is
// failed, unless its tool said it may run again (TaskMayRerun, or an
// idempotentHint): a shutting-down instance then releases it (no owner,
// working), and an instance that finds the lease of a dead one lapsed
// claims it, and runs it again, at most maxTaskReruns times.
//
// RunsOnce and DeferTask tasks wait in place, as before (tasks.go).

// maxTaskReruns bounds the runs of a task begun after one was lost.
const maxTaskReruns = 3

// maxRecordedInput bounds what a task that runs again keeps of one
// question: the request and its answer, in bytes.
const maxRecordedInput = 4096

// errTaskParked is what a blocking call returns in a task whose question
// now waits as the task's record: the handler returns, and runs again
// once answered.
var errTaskParked = fmt.Errorf("the task waits for its client's answer as its record; the handler runs again, from the top, once answered: return: %w", mrtr.ErrInputRequired)

// errTaskMoved: another instance runs the task now, or none does.
var errTaskMoved = errors.New("the task is no longer this instance's to run")

// resumes reports whether a task of e runs again from the top after a
// question, rather than waiting in place.
func (e *toolEntry) resumes() bool { return !e.opts.RunsOnce && !e.opts.DeferTask }

// rerunsLost reports whether a task of e runs again when its run is lost.
func (e *toolEntry) rerunsLost() bool {
	if e.opts.TaskMayRerun {
		return true
	}
	a := e.tool.Annotations
	return e.resumes() && a != nil && a.IdempotentHint != nil && *a.IdempotentHint
}

// callRecord is Record.Call: what another run of the handler needs.
type callRecord struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      callMeta        `json:"_meta"`
}

type callMeta struct {
	ProtocolVersion    string              `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities json.RawMessage     `json:"io.modelcontextprotocol/clientCapabilities"`
	ClientInfo         *mcp.Implementation `json:"io.modelcontextprotocol/clientInfo,omitempty"`
}

// encodeCall encodes the call of req for Record.Call.
func encodeCall(req *ToolRequest) (json.RawMessage, error) {
	caps, err := json.Marshal(req.Meta.ClientCapabilities)
	if err != nil {
		return nil, fmt.Errorf("task: encode the call: %w", err)
	}
	b, err := json.Marshal(callRecord{Name: req.Name, Arguments: req.Arguments,
		Meta: callMeta{ProtocolVersion: req.Meta.ProtocolVersion, ClientCapabilities: caps, ClientInfo: req.Meta.ClientInfo}})
	if err != nil {
		return nil, fmt.Errorf("task: encode the call: %w", err)
	}
	return b, nil
}

// callTool returns the tool of a recorded call, or nil.
func (h *taskHost) callTool(call json.RawMessage) *toolEntry {
	var c struct {
		Name string `json:"name"`
	}
	if len(call) == 0 || json.Unmarshal(call, &c) != nil {
		return nil
	}
	h.s.mu.RLock()
	defer h.s.mu.RUnlock()
	e, _ := h.s.tools.get(c.Name)
	return e
}

// takesRuns reports whether this instance may start runs: it is neither
// closed nor draining.
func (h *taskHost) takesRuns() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.closed && !h.draining
}

// unowned reports whether no instance runs r (and r is not terminal).
func unowned(r *TaskRecord) bool { return r.Owner == "" && !r.Status.Terminal() }

// pastTTL reports whether r outlived its time to live at now.
func pastTTL(r *TaskRecord, now time.Time) bool {
	return !now.Before(r.CreatedAt.Add(time.Duration(r.TTLMs) * time.Millisecond))
}

// claim makes this instance the task's runner in r: an unowned task
// whose questions are all answered. It reports false, leaving r alone,
// otherwise.
func (h *taskHost) claim(r *TaskRecord, now time.Time) bool {
	if !unowned(r) || len(r.pending()) > 0 || pastTTL(r, now) || r.Call == nil {
		return false
	}
	r.Owner, r.Status, r.LeaseUntil, r.SuspectSince, r.UpdatedAt = h.instance, mcp.TaskWorking, now.Add(h.lease), time.Time{}, now
	return true
}

// adopt deals with an unowned task a reader found (load): one that
// outlived its time to live is failed; one whose questions are answered
// is claimed and run here. It returns the record as it is then.
func (h *taskHost) adopt(ctx context.Context, rec *TaskRecord) (*TaskRecord, error) {
	now := h.s.now()
	expired := pastTTL(rec, now)
	if !expired && (len(rec.pending()) > 0 || !h.takesRuns()) {
		return rec, nil
	}
	claimed := false
	out, err := h.store.Update(ctx, rec.ID, func(r *TaskRecord) error {
		claimed = false
		switch {
		case !unowned(r):
			return ErrTaskNoUpdate
		case pastTTL(r, now):
			failTask(r, now, "the task outlived its time to live (ttlMs) and was stopped")
			return nil
		case h.claim(r, now):
			claimed = true
			return nil
		}
		return ErrTaskNoUpdate
	})
	if err != nil {
		return nil, err
	}
	if claimed {
		h.resume(ctx, out)
	}
	return out, nil
}

// resume runs the handler of a task this instance just claimed (rec, as
// stored), again from the top, with the answers recorded. A task that
// cannot run here is failed.
func (h *taskHost) resume(ctx context.Context, rec *TaskRecord) {
	s := h.s
	fail := func(why string) {
		s.log.Error("task: running the handler again failed", "task", rec.ID, "why", why)
		now := s.now()
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.storeTimeout)
		defer cancel()
		if _, err := h.store.Update(uctx, rec.ID, func(r *TaskRecord) error {
			if r.Status.Terminal() || r.Owner != h.instance {
				return ErrTaskNoUpdate
			}
			failTask(r, now, why)
			return nil
		}); err != nil && !errors.Is(err, ErrTaskNotFound) {
			s.log.Error("task: failing a task that could not run again did not work", "task", rec.ID, "err", err)
		}
	}
	r, re := decodeRequest(&rpcwire.Message{ID: mcp.StringID("task:" + rec.ID), Method: "tools/call", Params: rec.Call})
	if re != nil {
		fail("the task's recorded call is unreadable: " + re.Message)
		return
	}
	ctx = ContextWithPrincipal(context.WithoutCancel(ctx), rec.Principal)
	req, e, mc, asTask, _, re := s.prepareToolCall(ctx, r, nil)
	switch {
	case re != nil:
		fail("the task's call was refused when run again: " + re.Message)
		return
	case req == nil:
		fail("the task's arguments no longer pass the tool's input schema")
		return
	case !asTask || !e.resumes():
		fail("the task's tool no longer runs as a task that runs again (it was changed since the task started)")
		return
	}
	run := h.newRun(ctx)
	run.link() // no request to end with
	run.owner = taskOwner(ctx, r.clientAddr(nil))
	run.resumes, run.call = true, rec.Call
	for _, in := range rec.Inputs {
		if in.Answer != nil {
			run.replay = append(run.replay, in)
		}
	}
	run.id, run.seed, run.latest, run.state = rec.ID, rec, rec, runStarted
	req.task = run
	req.notifier = taskNotifier{run: run}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		fail("the server instance that took the task up shut down")
		return
	}
	h.running[run.owner]++
	h.runningTotal++
	h.runs[rec.ID] = run
	h.wg.Add(1) // the supervisor
	if !h.receiving {
		h.receiving = true
		h.wg.Add(1)
		go h.receive()
	}
	h.mu.Unlock()
	h.startBeats()
	close(run.started)
	s.taskStarted(run.ctx)
	left := rec.CreatedAt.Add(time.Duration(rec.TTLMs) * time.Millisecond).Sub(s.now())
	expire := time.AfterFunc(max(left, 0), func() { run.stop(errTaskExpired) })
	closed := context.AfterFunc(s.life, func() { run.stop(errServerClosed) })
	go run.supervise(expire, closed)
	s.runTaskHandler(run, r, e, mc, req)
}

// askRecorded is ask for a task whose handler runs again: questions asked
// before are answered from the record, in order; new ones are written to
// it, and the handler is told to return (errTaskParked).
func (run *taskRun) askRecorded(ctx context.Context, irs []mrtr.InputRequest, reqs []json.RawMessage) ([]json.RawMessage, error) {
	run.mu.Lock()
	pos, replay, parked := run.pos, run.replay, run.parked
	run.mu.Unlock()
	if parked {
		return nil, errTaskParked
	}
	if pos < len(replay) {
		if pos+len(reqs) > len(replay) {
			return nil, fmt.Errorf("task: run again, the handler asked %d questions at once where it had asked %d: a task's handler must ask the same questions in the same order on every run", len(reqs), len(replay)-pos)
		}
		answers := make([]json.RawMessage, len(reqs))
		for i, q := range reqs {
			in := replay[pos+i]
			if k := irs[i].Key(); !bytes.Equal(in.Request, q) || k != "" && k != in.Key {
				return nil, fmt.Errorf("task: run again, the handler asked a question (%s) other than the one it asked in that place before (key %s): a task's handler must ask the same questions in the same order on every run", irs[i].Method(), in.Key)
			}
			answers[i] = in.Answer
		}
		run.mu.Lock()
		run.pos += len(reqs)
		run.mu.Unlock()
		return answers, nil
	}
	for i, q := range reqs {
		if len(q) > maxRecordedInput {
			return nil, fmt.Errorf("task: the %s request is %d bytes; a task that runs again keeps at most %d bytes per question (request and answer): ask less, or register the tool with RunsOnce", irs[i].Method(), len(q), maxRecordedInput)
		}
	}
	h := run.host
	now := h.s.now()
	actx, cancel := context.WithTimeout(ctx, h.storeTimeout)
	defer cancel()
	run.writes.Lock()
	_, err := run.update(actx, func(r *TaskRecord) error {
		if r.Status.Terminal() {
			return terminalError(r)
		}
		if err := addInputs(r, irs, reqs); err != nil {
			return err
		}
		r.Status, r.StatusMessage, r.UpdatedAt = mcp.TaskInputRequired, "", now
		r.Owner, r.SuspectSince = "", time.Time{} // waiting is data: no one runs it
		return nil
	})
	if err == nil {
		run.mu.Lock()
		run.parked = true
		run.mu.Unlock()
	}
	run.writes.Unlock()
	if err != nil {
		return nil, fmt.Errorf("task: ask the client: %w", err)
	}
	h.s.record(context.Background(), measurement{Kind: measureTaskStatus, Reason: string(mcp.TaskInputRequired)})
	return nil, errTaskParked
}

// giveUp leaves a task whose run this instance gives up (it shuts down)
// to run again elsewhere, if its tool allows that and it has runs left;
// it reports whether it did.
func (run *taskRun) giveUp(r *TaskRecord, now time.Time) bool {
	if !run.rerunsLost || r.Reruns >= maxTaskReruns {
		return false
	}
	r.Reruns++
	r.Owner, r.Status, r.SuspectSince, r.UpdatedAt = "", mcp.TaskWorking, time.Time{}, now
	r.Inputs = answeredOnly(r.Inputs)
	r.StatusMessage = fmt.Sprintf("the server instance running the task shut down; the next instance to read it runs it again (run %d of at most %d after a lost one)", r.Reruns, maxTaskReruns)
	return true
}

// rerunLost claims, in r, a task whose instance is gone, to run again
// here, if its tool allows that and it has runs left; it reports whether
// it did.
func (h *taskHost) rerunLost(r *TaskRecord, now time.Time) bool {
	if r.Reruns >= maxTaskReruns || !h.takesRuns() {
		return false
	}
	e := h.callTool(r.Call)
	if e == nil || !e.rerunsLost() {
		return false
	}
	r.Reruns++
	r.Inputs = answeredOnly(r.Inputs)
	r.Owner, r.Status, r.LeaseUntil, r.SuspectSince, r.UpdatedAt = h.instance, mcp.TaskWorking, now.Add(h.lease), time.Time{}, now
	r.StatusMessage = fmt.Sprintf("the server instance running the task went away; another runs it again from the start (run %d of at most %d after a lost one)", r.Reruns, maxTaskReruns)
	return true
}

// answeredOnly drops the questions no one answered (a run lost while it
// asked): the next run asks them again.
func answeredOnly(ins []TaskInput) []TaskInput {
	kept := ins[:0]
	for _, in := range ins {
		if in.Answer != nil {
			kept = append(kept, in)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}
