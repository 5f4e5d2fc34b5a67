// What every Node test client of the examples shares: where node-deps.sh
// installed the official TypeScript SDK, loading its modules, and the
// JSON lines a client writes for its Go test. The clients are
// everything/testdata/legacy-client.mjs and fleet/testdata/*-client.mjs.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// nodeDir is the folder node-deps.sh installs into, as that script
// computes it.
export function nodeDir() {
  if (process.env.BATON_NODE_DIR) return process.env.BATON_NODE_DIR;
  const cache = process.env.BATON_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'baton');
  return join(cache, 'node-22.23.5');
}

// sdkModule resolves SUB (e.g. "./client/index.js") through the SDK's
// package.json "exports" (import condition), as a bare import would.
const sdkDir = join(nodeDir(), 'node_modules', '@modelcontextprotocol', 'sdk');
let sdkPkg;
function sdkPackage() {
  sdkPkg ??= JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8'));
  return sdkPkg;
}
export function sdkModule(sub) {
  const exp = sdkPackage().exports ?? {};
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

// sdkVersion is the installed SDK's version, from its package.json.
export function sdkVersion() {
  return sdkPackage().version ?? null;
}

// emit writes obj as one JSON line on stdout.
export function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// exitWith writes obj as the last JSON line and exits with code once
// stdout has it; later calls do nothing.
let finished = false;
export function exitWith(obj, code) {
  if (finished) return;
  finished = true;
  process.stdout.write(JSON.stringify(obj) + '\n', () => process.exit(code));
}
