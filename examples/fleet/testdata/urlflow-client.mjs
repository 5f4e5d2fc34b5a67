// A 2025-11-25 client of URL-mode elicitation: the official TypeScript
// SDK's Client over StreamableHTTPClientTransport, through nginx.
// urlflow_test.go runs it:
//
//   BATON_NODE_DIR=DIR node urlflow-client.mjs URL BEARER [--timeout-ms T]
//
// It declares elicitation.url, calls authorize_account and accepts the
// URL elicitation at once (consent to open the link), printing
// {"event":"elicit","mode":..,"url":..,"elicitationId":..,"callUpstream":U}
// (U the instance holding the call, from nginx's X-Upstream): the test then
// plays the browser. Each notifications/elicitation/complete prints
// {"event":"complete","elicitationId":..}. The end is
// {"final":{"result":..,"callUpstream":U}} or {"final":{"error":..}} with
// exit status 1. Diagnostics go to stderr.

import { emit, exitWith, sdkModule } from '../../everything/testdata/sdk.mjs';
const argv = process.argv.slice(2);
let timeoutMs = 120000;
const positional = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--timeout-ms') timeoutMs = Number(argv[++i]);
  else positional.push(argv[i]);
}
const [url, bearer] = positional;

function finish(obj, code) {
  exitWith({ final: obj }, code);
}

let callUpstream = '';
async function tracingFetch(input, init) {
  const res = await fetch(input, init);
  if (init?.method === 'POST' && typeof init.body === 'string') {
    try {
      if (JSON.parse(init.body).method === 'tools/call') callUpstream = res.headers.get('x-upstream') ?? '';
    } catch {}
  }
  return res;
}

async function main() {
  if (!url || !bearer) throw new Error('usage: node urlflow-client.mjs URL BEARER [--timeout-ms T]');
  const [{ Client }, { StreamableHTTPClientTransport }, types] = await Promise.all([
    sdkModule('./client/index.js'),
    sdkModule('./client/streamableHttp.js'),
    sdkModule('./types.js'),
  ]);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: tracingFetch,
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  const client = new Client({ name: 'baton-urlflow-client', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
  client.setRequestHandler(types.ElicitRequestSchema, async (req) => {
    const p = req.params;
    emit({ event: 'elicit', mode: p.mode, url: p.url, elicitationId: p.elicitationId, callUpstream });
    return { action: 'accept' };
  });
  client.setNotificationHandler(types.ElicitationCompleteNotificationSchema, async (n) => {
    emit({ event: 'complete', elicitationId: n.params.elicitationId });
  });
  await client.connect(transport);
  const result = await client.callTool({ name: 'authorize_account', arguments: {} }, undefined, { timeout: timeoutMs });
  await client.close();
  finish({ result, callUpstream, protocolVersion: transport.protocolVersion ?? '' }, 0);
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err) + '\n');
  finish({ error: String(err?.message ?? err) }, 1);
});
