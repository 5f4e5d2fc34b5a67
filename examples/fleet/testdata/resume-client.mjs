// A 2025-11-25 client of the fleet that is cut off and cancels: the
// official TypeScript SDK's Client over StreamableHTTPClientTransport,
// talking to nginx (round-robin, no affinity). fault_resume_test.go runs
// it:
//
//   BATON_NODE_DIR=DIR node resume-client.mjs URL N
//
// N rounds, each on its own session:
//   - resume: test_streaming_elicitation, whose POST stream the client's
//     fetch cuts (aborts) right after the first event with an id. The SDK
//     reconnects with GET and Last-Event-ID (through nginx, so usually to
//     another instance), gets the elicitation it missed, answers it, and
//     the call resolves from the resumed stream.
//   - cancel: slow_compute for 8 s, cancelled by the client after 300 ms
//     (notifications/cancelled); the POST's response must be 200 with
//     text/event-stream or application/json, never an empty 200.
//
// stdout: one line {"final":{...}}, or {"final":{"error":...}} with exit
// status 1.
import { createInterface } from 'node:readline';
import { exitWith, sdkModule } from '../../everything/testdata/sdk.mjs';

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

const rounds = Number(mode ?? 1);

// cutNext, when set, makes the next tools/call POST stream end with a
// network error after its first event with an id (the connection is
// aborted, as a lost network would).
let cutNext = false;
const cuts = []; // {upstream, lastEventId}
const gets = []; // {lastEventId, status, upstream} of every GET
const callResponses = []; // {tool, status, contentType, upstream} of tools/call POSTs
async function cuttingFetch(input, init) {
  let msg;
  if (init?.method === 'POST' && typeof init.body === 'string') {
    try {
      msg = JSON.parse(init.body);
    } catch {}
  }
  const ctl = new AbortController();
  if (init?.signal) init.signal.addEventListener('abort', () => ctl.abort(init.signal.reason), { once: true });
  const res = await fetch(input, { ...init, signal: ctl.signal });
  const upstream = res.headers.get('x-upstream') ?? '';
  if ((init?.method ?? 'GET') === 'GET') {
    const h = new Headers(init?.headers);
    gets.push({ lastEventId: h.get('last-event-id') ?? '', status: res.status, upstream });
  }
  if (msg?.method === 'tools/call') {
    callResponses.push({ tool: msg.params?.name, status: res.status, contentType: res.headers.get('content-type') ?? '', upstream });
  }
  if (!(msg?.method === 'tools/call' && cutNext && res.body)) return res;
  cutNext = false;
  // Pass bytes on until an event with an id has gone by, then cut.
  const reader = res.body.getReader();
  let seen = '';
  const body = new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      controller.enqueue(value);
      seen += new TextDecoder().decode(value);
      const m = /(?:^|\n)id: ?([^\n]+)\n(?:[^\n]+\n)*\n/.exec(seen);
      if (m) {
        cuts.push({ upstream, lastEventId: m[1] });
        ctl.abort(new Error('cut by the test'));
        controller.error(new TypeError('network connection lost (cut by the test)'));
      }
    },
    cancel(reason) {
      ctl.abort(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

async function main() {
  if (!url || !(rounds > 0)) throw new Error('usage: node resume-client.mjs URL N');
  const [{ Client }, { StreamableHTTPClientTransport }, types] = await Promise.all([
    sdkModule('./client/index.js'),
    sdkModule('./client/streamableHttp.js'),
    sdkModule('./types.js'),
  ]);
  const { ElicitRequestSchema } = types;
  const results = [];
  for (let r = 0; r < rounds; r++) {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      fetch: cuttingFetch,
      reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
    });
    const client = new Client({ name: 'baton-resume-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const errors = [];
    client.onerror = (err) => errors.push(String(err?.message ?? err));
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: 'accept', content: { note: 'resumed ' + r } };
    });
    await client.connect(transport);
    const round = { sessionId: transport.sessionId };
    // resume
    cutNext = true;
    const cutsBefore = cuts.length;
    const t0 = Date.now();
    try {
      const res = await client.callTool({ name: 'test_streaming_elicitation', arguments: {} }, undefined, { timeout: 20000 });
      round.resumeText = res.content?.[0]?.text ?? '';
    } catch (e) {
      round.resumeError = String(e?.message ?? e);
    }
    round.resumeMs = Date.now() - t0;
    round.cut = cuts.length > cutsBefore ? cuts[cuts.length - 1] : null;
    round.asked = asked;
    // cancel
    const ac = new AbortController();
    setTimeout(() => ac.abort('the user pressed Cancel'), 300);
    try {
      await client.callTool({ name: 'slow_compute', arguments: { seconds: 8 } }, undefined, { signal: ac.signal, timeout: 20000 });
      round.cancelResult = 'completed';
    } catch (e) {
      round.cancelResult = String(e?.message ?? e);
    }
    // The session goes on after both.
    try {
      const res = await client.callTool({ name: 'test_streaming_elicitation', arguments: {} }, undefined, { timeout: 20000 });
      round.afterText = res.content?.[0]?.text ?? '';
    } catch (e) {
      round.afterError = String(e?.message ?? e);
    }
    round.errors = errors.filter((e) => !e.includes('cut by the test') && !e.includes('network connection lost'));
    await client.close();
    results.push(round);
  }
  // Let a cancelled call's POST come back before reporting.
  await new Promise((r) => setTimeout(r, 500));
  finish({ rounds: results, gets, callResponses }, 0);
}

main().catch((e) => finish({ error: String(e?.stack ?? e) }, 1));
