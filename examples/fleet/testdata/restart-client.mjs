// 2025-11-25 clients of the fleet through a rolling restart: the official
// TypeScript SDK's Client over StreamableHTTPClientTransport, talking to
// nginx (round-robin, no affinity). fault_restart_ts_test.go runs it while it
// restarts the instances one after another:
//
//   BATON_NODE_DIR=DIR node restart-client.mjs [--think-ms MS] [--slow-ms MS] [--slow-every N] URL WORKERS
//
// Each of WORKERS sessions runs onboard_user (two elicitations, answered
// with answers unique to the flow) again and again until a line "stop"
// (or EOF) arrives on stdin; the user takes --think-ms (50) to answer each
// question, and --slow-ms (2500) for the first question of every
// --slow-every (8) flow, so that calls are still parked when an instance's drain ends their
// streams (a second after SIGTERM); the flows under way then finish. A flow
// completes when its result names both of its answers; an answer is lost
// when the client gave it and the flow did not complete with it. The
// transport resumes a cut stream with GET and Last-Event-ID; every GET is
// recorded, and a stream counts as resumed once a GET with its last event
// id got 200 (an attempt may first get 503 from the draining instance).
//
// stdout: {"ready":true} once every session is open, then one line
// {"final":{...}}, or {"final":{"error":...}} with exit status 1.
import { createInterface } from 'node:readline';
import { emit, exitWith, sdkModule } from '../../everything/testdata/sdk.mjs';

const argv = process.argv.slice(2);
let timeoutMs = 30000;
const positional = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--timeout-ms') timeoutMs = Number(argv[++i]);
  else if (argv[i] === '--think-ms' || argv[i] === '--slow-ms' || argv[i] === '--slow-every') i++;
  else positional.push(argv[i]);
}
const [url, workersArg] = positional;

function finish(obj, code) {
  exitWith({ final: obj }, code);
}


const workers = Number(workersArg ?? 4);
// thinkMs is how long the user takes to answer a question: it keeps calls
// parked at every moment (so SIGTERM finds some) and each session's
// answers under the server's per-session limit (32 a second).
let thinkMs = 50;
let slowMs = 2500;
let slowEvery = 8;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--think-ms') thinkMs = Number(argv[i + 1]);
  if (argv[i] === '--slow-ms') slowMs = Number(argv[i + 1]);
  if (argv[i] === '--slow-every') slowEvery = Number(argv[i + 1]);
}
let stopping = false;
createInterface({ input: process.stdin })
  .on('line', (l) => {
    if (l.trim() === 'stop') stopping = true;
  })
  .on('close', () => {
    stopping = true;
  });

const gets = []; // {lastEventId, status, upstream} of every GET
const posts = { total: 0, byStatus: {} };
async function recordingFetch(input, init) {
  const method = init?.method ?? 'GET';
  let res;
  try {
    res = await fetch(input, init);
  } catch (e) {
    if (method === 'GET') gets.push({ lastEventId: new Headers(init?.headers).get('last-event-id') ?? '', status: 0, error: String(e?.message ?? e) });
    throw e;
  }
  if (method === 'GET') {
    gets.push({ lastEventId: new Headers(init?.headers).get('last-event-id') ?? '', status: res.status, upstream: res.headers.get('x-upstream') ?? '' });
  } else if (method === 'POST') {
    posts.total++;
    posts.byStatus[res.status] = (posts.byStatus[res.status] ?? 0) + 1;
  }
  return res;
}

async function main() {
  if (!url || !(workers > 0)) throw new Error('usage: node restart-client.mjs URL WORKERS');
  const [{ Client }, { StreamableHTTPClientTransport }, types] = await Promise.all([
    sdkModule('./client/index.js'),
    sdkModule('./client/streamableHttp.js'),
    sdkModule('./types.js'),
  ]);
  const { ElicitRequestSchema } = types;
  const c = { started: 0, completed: 0, failed: 0, asked: 0, answered: 0, lost: 0, failures: [], errors: [] };
  const sessions = [];
  for (let w = 0; w < workers; w++) {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      fetch: recordingFetch,
      reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 10 },
    });
    const client = new Client({ name: 'baton-restart-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.onerror = (err) => c.errors.push(`worker ${w}: ${String(err?.message ?? err)}`);
    const s = { w, client, transport, flow: null };
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      c.asked++;
      const f = s.flow;
      const msg = req.params?.message ?? '';
      let content;
      if (msg.startsWith('What is your name')) content = { name: f.name };
      else content = { email: f.email };
      const slow = f.n % slowEvery === 0 && f.answers === 0;
      await new Promise((r) => setTimeout(r, slow ? slowMs : thinkMs)); // the user reads and types
      f.answers++;
      c.answered++;
      return { action: 'accept', content };
    });
    await client.connect(transport);
    sessions.push(s);
  }
  emit({ ready: true, sessions: sessions.map((s) => s.transport.sessionId) });
  let seq = 0;
  await Promise.all(
    sessions.map(async (s) => {
      while (!stopping) {
        const n = ++seq;
        const f = { n, name: `User${s.w}x${n}`, email: `u${s.w}x${n}@example.com`, answers: 0 };
        s.flow = f;
        c.started++;
        const want = `Welcome aboard, ${f.name} <${f.email}>`;
        const t0 = Date.now();
        let got;
        try {
          const res = await s.client.callTool({ name: 'onboard_user', arguments: {} }, undefined, { timeout: 60000 });
          got = res.isError ? 'tool error: ' + (res.content?.[0]?.text ?? '') : (res.content?.[0]?.text ?? '');
        } catch (e) {
          got = 'error: ' + String(e?.message ?? e);
        }
        if (got === want && f.answers === 2) {
          c.completed++;
        } else {
          c.failed++;
          c.lost += f.answers;
          c.failures.push({ session: s.transport.sessionId, flow: n, answers: f.answers, ms: Date.now() - t0, got });
        }
      }
    }),
  );
  for (const s of sessions) await s.client.close();
  const attempts = gets.filter((g) => g.lastEventId !== '');
  const resumed = new Set(attempts.map((g) => g.lastEventId));
  const ok = new Set(attempts.filter((g) => g.status === 200).map((g) => g.lastEventId));
  const getsByStatus = {};
  for (const g of gets) getsByStatus[g.status] = (getsByStatus[g.status] ?? 0) + 1;
  finish({ ...c, posts, gets: gets.length, getsByStatus, resumeAttempts: attempts.length, resumes: resumed.size, resumedOK: ok.size, resumeDetail: attempts.slice(0, 20) }, 0);
}

main().catch((e) => finish({ error: String(e?.stack ?? e) }, 1));
