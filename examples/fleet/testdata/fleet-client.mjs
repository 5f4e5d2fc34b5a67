// A 2025-11-25 client of the fleet: the official TypeScript SDK's Client
// over StreamableHTTPClientTransport, talking to nginx, which balances every
// HTTP request round-robin with no affinity. fleet_test.go runs it:
//
//   BATON_NODE_DIR=DIR node fleet-client.mjs URL flows N [--timeout-ms T]
//   BATON_NODE_DIR=DIR node fleet-client.mjs URL kill [--timeout-ms T]
//
// flows: one session, N rounds of onboard_user (written in the blocking
// style: two real elicitation round trips) and
// test_input_required_result_multi_round (an MRTR tool the server bridges:
// two rounds), every answer POSTed through nginx.
//
// kill: one session; a warm-up onboard_user; then onboard_user again,
// whose first question is held: the client prints
// {"event":"parked","upstream":U} (U the instance holding the call, from
// nginx's X-Upstream) and waits for a line on stdin (the test kills U in
// the meantime) before it answers. It records how the parked call ends,
// then runs onboard_user once more on the same session and pings.
//
// stdout carries JSON lines: events, then {"final":{...}} with what
// happened: flows (tool, text, the upstream of the call and of each
// answer), transport errors, the session id before and after, or
// {"final":{"error":...}} with exit status 1. Diagnostics go to stderr.
import { createInterface } from 'node:readline';
import { emit, exitWith, sdkModule } from '../../everything/testdata/sdk.mjs';

const argv = process.argv.slice(2);
let timeoutMs = 30000;
const positional = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--timeout-ms') timeoutMs = Number(argv[++i]);
  else positional.push(argv[i]);
}
const [url, mode, countArg] = positional;

function finish(obj, code) {
  exitWith({ final: obj }, code);
}

// Every HTTP exchange, as the balancer routed it.
const calls = new Map(); // tools/call request id -> upstream of its POST
const answers = new Map(); // server request id (JSON text) -> upstream of the answer's POST
const answerStatus = new Map(); // server request id (JSON text) -> HTTP status of the answer's POST
const statuses = []; // every HTTP status seen, with the method
async function tracingFetch(input, init) {
  const res = await fetch(input, init);
  const upstream = res.headers.get('x-upstream') ?? '';
  let msg;
  if (init?.method === 'POST' && typeof init.body === 'string') {
    try {
      msg = JSON.parse(init.body);
    } catch {}
  }
  const what = msg?.method ?? (msg && 'id' in msg ? 'response' : init?.method ?? 'GET');
  statuses.push({ what, status: res.status, upstream });
  if (msg?.method === 'tools/call') calls.set(JSON.stringify(msg.id), upstream);
  if (msg && !msg.method && 'id' in msg) {
    answers.set(JSON.stringify(msg.id), upstream);
    answerStatus.set(JSON.stringify(msg.id), res.status);
  }
  return res;
}

async function main() {
  if (!url || !['flows', 'kill'].includes(mode)) throw new Error('usage: node fleet-client.mjs URL flows N | kill [--timeout-ms T]');
  const rounds = mode === 'flows' ? Number(countArg ?? 1) : 0;
  const [{ Client }, { StreamableHTTPClientTransport }, types] = await Promise.all([
    sdkModule('./client/index.js'),
    sdkModule('./client/streamableHttp.js'),
    sdkModule('./types.js'),
  ]);
  const { ElicitRequestSchema } = types;

  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: tracingFetch });
  // The id of every server request, by the call whose stream carried it.
  let current = null; // {requests: [...]} of the call in progress
  let inner;
  const tap = (message, extra) => {
    if (message && typeof message.method === 'string' && message.id !== undefined && current) {
      current.requests.push({ id: JSON.stringify(message.id), method: message.method });
    }
    inner?.(message, extra);
  };
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => (inner ? tap : undefined),
    set: (fn) => {
      inner = fn;
    },
  });

  const client = new Client({ name: 'baton-fleet-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const transportErrors = [];
  let closing = false;
  client.onerror = (err) => {
    if (!closing) transportErrors.push(String(err?.message ?? err));
  };

  // Answers: by the property asked for. hold, if set, is awaited before
  // the first answer of the parked call.
  let hold = null;
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    const props = req.params?.requestedSchema?.properties ?? {};
    if (hold) {
      const h = hold;
      hold = null;
      await h();
    }
    if ('name' in props) return { action: 'accept', content: { name: 'Alice' } };
    if ('email' in props) return { action: 'accept', content: { email: 'alice@example.com' } };
    if ('color' in props) return { action: 'accept', content: { color: 'blue' } };
    throw new Error(`unexpected question: ${JSON.stringify(props)}`);
  });

  const flows = [];
  let nextCallId = 0;
  async function flow(tool, want, opts = {}) {
    current = { requests: [] };
    const mine = current;
    const started = Date.now();
    const entry = { tool, want };
    try {
      const result = await client.callTool({ name: tool, arguments: {} }, undefined, { timeout: opts.timeout ?? timeoutMs });
      const first = (result.content ?? []).find((c) => c && c.type === 'text');
      entry.text = first ? first.text : null;
      entry.isError = result.isError === true;
      entry.ok = entry.text === want && !entry.isError;
    } catch (err) {
      entry.error = String(err?.message ?? err);
      entry.code = err?.code ?? null;
      entry.ok = false;
    }
    entry.ms = Date.now() - started;
    // The SDK numbers its requests; the latest tools/call is this one.
    const callIds = [...calls.keys()];
    entry.callUpstream = calls.get(callIds[callIds.length - 1]) ?? null;
    entry.answers = mine.requests.map((r) => ({ method: r.method, id: r.id, upstream: answers.get(r.id) ?? null, status: answerStatus.get(r.id) ?? null }));
    flows.push(entry);
    current = null;
    return entry;
  }

  const out = { mode, flows, transportErrors, statuses };
  try {
    await client.connect(transport);
    out.sessionId = transport.sessionId ?? null;
    out.protocolVersion = transport.protocolVersion ?? null;
    const onboard = 'Welcome aboard, Alice <alice@example.com>';
    const multi = 'Alice likes blue';
    if (mode === 'flows') {
      for (let i = 0; i < rounds; i++) {
        await flow('onboard_user', onboard);
        await flow('test_input_required_result_multi_round', multi);
      }
    } else {
      await flow('onboard_user', onboard);
      // The parked call: its first question waits for the test.
      const lines = createInterface({ input: process.stdin });
      const proceed = new Promise((resolve) => lines.once('line', resolve));
      hold = async () => {
        const callIds = [...calls.keys()];
        emit({ event: 'parked', upstream: calls.get(callIds[callIds.length - 1]) ?? null });
        await proceed;
      };
      out.parked = await flow('onboard_user', onboard);
      lines.close();
      // The session after the instance died: served by the others.
      out.sessionIdAfter = transport.sessionId ?? null;
      out.after = await flow('onboard_user', onboard);
      await client.ping();
      out.pinged = true;
    }
    await transport.terminateSession();
    out.deleted = true;
  } finally {
    closing = true;
    await client.close().catch((err) => console.error('fleet-client: close:', err?.message ?? err));
  }
  finish(out, 0);
}

setTimeout(() => finish({ error: `fleet-client: no result within ${4 * timeoutMs} ms` }, 1), 4 * timeoutMs).unref();
main().catch((err) => finish({ error: String(err?.stack ?? err) }, 1));
