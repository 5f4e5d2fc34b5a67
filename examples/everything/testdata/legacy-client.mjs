// A real 2025-11-25 MCP client: the official TypeScript SDK's Client over
// StreamableHTTPClientTransport (initialize, Mcp-Session-Id, server-to-client
// requests on SSE). legacy_client_test.go runs it once per case:
//
//   BATON_NODE_DIR=DIR node legacy-client.mjs URL CASE [--timeout-ms N]
//
// DIR is the folder scripts/node-deps.sh prints (it holds node_modules with
// @modelcontextprotocol/sdk). The SDK is imported by absolute file URL since
// NODE_PATH does not apply to ES modules.
//
// It prints exactly one JSON line on stdout:
//   {"case","isError","text","structuredContent","requests":[{"method","params"}],
//    "notifications":[method...],"progress":[{"progressToken","progress"}],
//    "onprogress":[progress...],"logs":[data...],"sessionId",
//    "protocolVersion","sdkVersion"}
// or {"case","error"} with exit status 1. Diagnostics go to stderr.
import { exitWith, sdkModule, sdkVersion } from './sdk.mjs';

const argv = process.argv.slice(2);
let timeoutMs = 30000;
const positional = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--timeout-ms') {
    timeoutMs = Number(argv[++i]);
  } else if (argv[i].startsWith('--timeout-ms=')) {
    timeoutMs = Number(argv[i].slice('--timeout-ms='.length));
  } else {
    positional.push(argv[i]);
  }
}
const [url, caseName] = positional;

function finish(obj, code) {
  exitWith(obj, code);
}
function fail(err) {
  finish({ case: caseName ?? null, error: err instanceof Error ? err.message : String(err) }, 1);
}

// Answers per case. Anything not listed here is unexpected: it is still
// recorded, and answered with an error so the server sees a refusal.
const ELICIT = {
  'elicit-accept': () => ({ action: 'accept', content: { username: 'testuser', email: 'test@example.com' } }),
  'elicit-decline': () => ({ action: 'decline' }),
  'mrtr-single': () => ({ action: 'accept', content: { confirm: true } }),
  'mrtr-single-decline': () => ({ action: 'decline' }),
  'mrtr-multi': (params) => {
    const props = params?.requestedSchema?.properties ?? {};
    const content = {};
    if ('name' in props) content.name = 'Alice';
    if ('color' in props) content.color = 'blue';
    if (Object.keys(content).length === 0) {
      throw new Error(`mrtr-multi: no name or color in requestedSchema: ${JSON.stringify(props)}`);
    }
    return { action: 'accept', content };
  },
  'streaming-progress': () => ({ action: 'accept', content: { note: 'nothing' } }),
  'book-table': (params) => {
    const props = params?.requestedSchema?.properties ?? {};
    if ('date' in props) return { action: 'accept', content: { date: '2026-07-28', note: 'a table by the window' } };
    if ('confirm' in props) return { action: 'accept', content: { confirm: true } };
    throw new Error(`book-table: no date or confirm in requestedSchema: ${JSON.stringify(props)}`);
  },
  onboard: (params) => {
    const props = params?.requestedSchema?.properties ?? {};
    if ('name' in props) return { action: 'accept', content: { name: 'Alice' } };
    if ('email' in props) return { action: 'accept', content: { email: 'alice@example.com' } };
    throw new Error(`onboard: no name or email in requestedSchema: ${JSON.stringify(props)}`);
  },
};
const SAMPLE = {
  sampling: () => ({
    role: 'assistant',
    content: { type: 'text', text: 'Paris' },
    model: 'test-model',
    stopReason: 'endTurn',
  }),
};
const CALLS = {
  'elicit-accept': ['test_elicitation', { message: 'Please provide your information' }],
  'elicit-decline': ['test_elicitation', { message: 'Please provide your information' }],
  'mrtr-single': ['confirm_transfer', { to: 'bob', amount: 25 }],
  'mrtr-single-decline': ['confirm_transfer', { to: 'bob', amount: 25 }],
  'mrtr-multi': ['test_input_required_result_multi_round', {}],
  sampling: ['test_sampling', { prompt: 'Test prompt for sampling' }],
  onboard: ['onboard_user', {}],
  reconnection: ['test_reconnection', {}],
  'book-table': ['book_table', { restaurant: 'Chez Panisse', party: 4 }],
  'streaming-progress': ['test_streaming_elicitation', {}],
};
// Cases that set a log level and ask for progress (the SDK sends a
// progressToken when the call has an onprogress callback).
const STREAMING = new Set(['streaming-progress']);
// Cases that list the tools first: the SDK then checks the call's
// structuredContent against the tool's outputSchema (and fails the call
// when it does not match).
const LIST_FIRST = new Set(['book-table']);

async function main() {
  if (!url || !caseName) throw new Error('usage: node legacy-client.mjs URL CASE [--timeout-ms N]');
  if (!CALLS[caseName]) throw new Error(`unknown case ${caseName}; known: ${Object.keys(CALLS).join(', ')}`);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new Error('--timeout-ms needs a positive number');

  const [{ Client }, { StreamableHTTPClientTransport }, types] = await Promise.all([
    sdkModule('./client/index.js'),
    sdkModule('./client/streamableHttp.js'),
    sdkModule('./types.js'),
  ]);
  const { ElicitRequestSchema, CreateMessageRequestSchema, McpError, ErrorCode } = types;

  const requests = [];
  const notifications = [];
  const progress = []; // every notifications/progress as received
  const logs = []; // the data of every notifications/message
  const onprogress = []; // what the SDK's onprogress callback saw
  const transport = new StreamableHTTPClientTransport(new URL(url));
  // Record every server-to-client message as it arrives, before the SDK
  // parses it (the schemas may strip fields; we want the raw params).
  let inner;
  const tap = (message, extra) => {
    if (message && typeof message.method === 'string') {
      if (message.id !== undefined) {
        requests.push({ method: message.method, params: structuredClone(message.params ?? null) });
      } else {
        notifications.push(message.method);
        if (message.method === 'notifications/progress') {
          progress.push({ progressToken: message.params?.progressToken ?? null, progress: message.params?.progress ?? null });
        } else if (message.method === 'notifications/message') {
          logs.push(message.params?.data ?? null);
        }
      }
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

  const client = new Client(
    { name: 'baton-legacy-client-test', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {} } },
  );
  let closing = false; // close() aborts the open streams; that is no error
  client.onerror = (err) => {
    if (!closing) console.error('legacy-client: transport error:', err?.message ?? err);
  };

  const refuse = (what) => {
    throw new McpError(ErrorCode.InvalidRequest, `legacy-client: case ${caseName} does not expect ${what}`);
  };
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    const answer = ELICIT[caseName];
    return answer ? answer(req.params) : refuse('elicitation/create');
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const answer = SAMPLE[caseName];
    return answer ? answer(req.params) : refuse('sampling/createMessage');
  });

  let out;
  try {
    await client.connect(transport);
    const [name, args] = CALLS[caseName];
    const options = { timeout: timeoutMs };
    if (LIST_FIRST.has(caseName)) {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === name);
      if (!tool?.outputSchema) throw new Error(`tools/list shows no outputSchema for ${name}`);
    }
    if (STREAMING.has(caseName)) {
      await client.setLoggingLevel('debug');
      options.onprogress = (p) => onprogress.push(p.progress);
    }
    const result = await client.callTool({ name, arguments: args }, undefined, options);
    const first = (result.content ?? []).find((c) => c && c.type === 'text');
    out = {
      case: caseName,
      isError: result.isError === true,
      text: first ? first.text : null,
      structuredContent: result.structuredContent ?? null,
      requests,
      notifications,
      progress,
      onprogress,
      logs,
      sessionId: transport.sessionId ?? null,
      protocolVersion: transport.protocolVersion ?? null,
      sdkVersion: sdkVersion(),
    };
    // Client.close() only aborts the HTTP streams; ending the session is
    // the DELETE that terminateSession sends. A failed DELETE fails the case.
    await transport.terminateSession();
  } finally {
    closing = true;
    await client.close().catch((err) => console.error('legacy-client: close:', err?.message ?? err));
  }
  finish(out, 0);
}

// A watchdog beyond the call's own timeout, so a hung connect or DELETE
// still ends with one JSON line (finish exits the process, so this timer
// never delays a normal end).
setTimeout(() => fail(new Error(`legacy-client: no result within ${timeoutMs + 10000} ms`)), timeoutMs + 10000);
main().catch(fail);
