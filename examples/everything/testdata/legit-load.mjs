// Legitimate load from the official TypeScript SDK's 2025-11-25 Client,
// against a server at Baton's defaults (legitload_test.go runs it):
//
//   BATON_NODE_DIR=DIR node legit-load.mjs URL CONCURRENT SEQUENTIAL [--timeout-ms N]
//
// One session: CONCURRENT tools/call "confirm" at once (each asks one form
// question), then one "ask_many" call per kind (form, sampling, roots)
// that asks SEQUENTIAL questions in a row. Every question is answered at
// once. It prints one JSON line: {"sdkVersion","protocolVersion",
// "concurrent":{"ok","failed","errors"}, "sequential":{kind:{"ok","error"}},
// "answered"} with exit status 0, or {"error"} with 1.
import { exitWith, sdkModule, sdkVersion } from './sdk.mjs';

const argv = process.argv.slice(2);
let timeoutMs = 60000;
const positional = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--timeout-ms') timeoutMs = Number(argv[++i]);
  else positional.push(argv[i]);
}
const [url, concurrentArg, sequentialArg] = positional;
const concurrent = Number(concurrentArg);
const sequential = Number(sequentialArg);

async function main() {
  const [{ Client }, { StreamableHTTPClientTransport }, types] = await Promise.all([
    sdkModule('./client/index.js'),
    sdkModule('./client/streamableHttp.js'),
    sdkModule('./types.js'),
  ]);
  const { ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema } = types;
  const client = new Client(
    { name: 'baton-legit-load', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
  );
  let answered = 0;
  client.setRequestHandler(ElicitRequestSchema, async () => {
    answered++;
    return { action: 'accept', content: { ok: true } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    answered++;
    return { role: 'assistant', content: { type: 'text', text: 'yes' }, model: 'test' };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    answered++;
    return { roots: [{ uri: 'file:///tmp' }] };
  });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  const options = { timeout: timeoutMs };

  const results = await Promise.allSettled(
    Array.from({ length: concurrent }, () => client.callTool({ name: 'confirm', arguments: {} }, undefined, options)),
  );
  const errors = [];
  let ok = 0;
  for (const r of results) {
    const text = r.status === 'fulfilled' ? (r.value.content ?? []).find((c) => c.type === 'text')?.text : undefined;
    if (text === 'confirmed accept' && !r.value.isError) ok++;
    else if (errors.length < 5) errors.push(r.status === 'rejected' ? String(r.reason?.message ?? r.reason) : `result ${JSON.stringify(r.value)}`);
  }
  const seq = {};
  for (const kind of ['form', 'sampling', 'roots']) {
    try {
      const res = await client.callTool({ name: 'ask_many', arguments: { n: sequential, kind } }, undefined, options);
      const text = (res.content ?? []).find((c) => c.type === 'text')?.text;
      seq[kind] = text === `asked ${sequential}` && !res.isError ? { ok: true } : { ok: false, error: `result ${JSON.stringify(res)}` };
    } catch (err) {
      seq[kind] = { ok: false, error: String(err?.message ?? err) };
    }
  }
  const protocolVersion = transport.protocolVersion ?? null;
  await client.close();
  return { sdkVersion: sdkVersion(), protocolVersion, concurrent: { ok, failed: concurrent - ok, errors }, sequential: seq, answered };
}

main().then(
  (out) => exitWith(out, 0),
  (err) => exitWith({ error: err instanceof Error ? err.message : String(err) }, 1),
);
