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
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
let timeoutMs = 120000;
const positional = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--timeout-ms') timeoutMs = Number(argv[++i]);
  else positional.push(argv[i]);
}
const [url, bearer] = positional;

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}
let finished = false;
function finish(obj, code) {
  if (finished) return;
  finished = true;
  process.stdout.write(JSON.stringify({ final: obj }) + '\n', () => process.exit(code));
}

function nodeDir() {
  if (process.env.BATON_NODE_DIR) return process.env.BATON_NODE_DIR;
  const cache = process.env.BATON_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'baton');
  return join(cache, 'node-22.23.5');
}

// sdkModule resolves SUB through the SDK's package.json "exports".
const sdkDir = join(nodeDir(), 'node_modules', '@modelcontextprotocol', 'sdk');
function sdkModule(sub) {
  const exp = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')).exports ?? {};
  let target = exp[sub];
  let star;
  if (target === undefined) {
    for (const [key, value] of Object.entries(exp)) {
      if (!key.includes('*')) continue;
      const [pre, post] = key.split('*');
      if (sub.startsWith(pre) && sub.endsWith(post) && sub.length >= pre.length + post.length) {
        target = value;
        star = sub.slice(pre.length, sub.length - post.length);
        break;
      }
    }
  }
  if (target && typeof target === 'object') target = target.import ?? target.default;
  if (typeof target !== 'string') throw new Error(`@modelcontextprotocol/sdk exports no ${sub}`);
  if (star !== undefined) target = target.replace('*', star);
  return import(pathToFileURL(join(sdkDir, target)).href);
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
