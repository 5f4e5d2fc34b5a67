// 2025-11-25 calls that wait a long time for their users, through the
// fleet's nginx: the official TypeScript SDK's Client over
// StreamableHTTPClientTransport. waiting_fleet_test.go runs it while it
// restarts or kills the instances:
//
//   BATON_NODE_DIR=DIR node wait-client.mjs URL SESSIONS THINK_MS NET
//
// Session i comes from address NET.i (an X-Forwarded-For the fleet's
// nginx passes on, trusted): one user each, as in life, so that the
// per-client session quota counts each apart.
// Each of SESSIONS sessions calls onboard_user once; its user takes
// THINK_MS to answer the first question and answers the second at once.
// A call completes when its result names both of its answers; an answer
// is lost when the client gave it and its call did not complete with it.
//
// stdout: {"ready":true} once every session is open, {"asked":N} when the
// N-th first question arrives, then one line {"final":{...}}, or
// {"final":{"error":...}} with exit status 1.
import { emit, exitWith, sdkModule } from '../../everything/testdata/sdk.mjs';

const [url, sessionsArg, thinkArg, net] = process.argv.slice(2);
const sessions = Number(sessionsArg ?? 10);
const thinkMs = Number(thinkArg ?? 60000);

const gets = { total: 0, resumed: 0, byStatus: {} };
async function recordingFetch(addr, input, init) {
  const headers = new Headers(init?.headers);
  headers.set('x-forwarded-for', addr);
  const res = await fetch(input, { ...init, headers });
  if ((init?.method ?? 'GET') === 'GET') {
    gets.total++;
    if (new Headers(init?.headers).get('last-event-id')) gets.resumed++;
    gets.byStatus[res.status] = (gets.byStatus[res.status] ?? 0) + 1;
  }
  return res;
}

async function main() {
  if (!url || !(sessions > 0)) throw new Error('usage: node wait-client.mjs URL SESSIONS THINK_MS');
  const [{ Client }, { StreamableHTTPClientTransport }, { ElicitRequestSchema }] = await Promise.all([
    sdkModule('./client/index.js'),
    sdkModule('./client/streamableHttp.js'),
    sdkModule('./types.js'),
  ]);
  const c = { started: 0, completed: 0, failed: 0, asked: 0, answered: 0, lost: 0, failures: [], errors: [] };
  const all = [];
  for (let w = 0; w < sessions; w++) {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      fetch: (input, init) => recordingFetch(`${net ?? '10.9.0'}.${w + 1}`, input, init),
      reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 100 },
    });
    const client = new Client({ name: 'baton-wait-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.onerror = (err) => c.errors.push(`session ${w}: ${String(err?.message ?? err)}`);
    const f = { name: `Ts${w}`, email: `ts${w}@example.com`, answers: 0, first: false };
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const msg = req.params?.message ?? '';
      if (msg.startsWith('What is your name')) {
        if (!f.first) {
          f.first = true;
          c.asked++;
          emit({ asked: c.asked });
        }
        await new Promise((r) => setTimeout(r, thinkMs)); // the user thinks
        f.answers = Math.max(f.answers, 1);
        c.answered++;
        return { action: 'accept', content: { name: f.name } };
      }
      f.answers = 2;
      c.answered++;
      return { action: 'accept', content: { email: f.email } };
    });
    await client.connect(transport);
    all.push({ client, transport, f });
  }
  emit({ ready: true });
  await Promise.all(
    all.map(async ({ client, transport, f }) => {
      c.started++;
      const want = `Welcome aboard, ${f.name} <${f.email}>`;
      let got;
      try {
        const res = await client.callTool({ name: 'onboard_user', arguments: {} }, undefined, { timeout: thinkMs + 120000 });
        got = res.isError ? 'tool error: ' + (res.content?.[0]?.text ?? '') : (res.content?.[0]?.text ?? '');
      } catch (e) {
        got = 'error: ' + String(e?.message ?? e);
      }
      if (got === want && f.answers === 2) {
        c.completed++;
      } else {
        c.failed++;
        c.lost += f.answers;
        c.failures.push({ session: transport.sessionId, answers: f.answers, got });
      }
    }),
  );
  for (const { client } of all) await client.close();
  exitWith({ final: { ...c, gets } }, 0);
}

main().catch((e) => exitWith({ final: { error: String(e?.stack ?? e) } }, 1));
