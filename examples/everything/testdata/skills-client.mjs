// A real Skills client (SEP-2640) on the official TypeScript SDK: its
// Client over StreamableHTTPClientTransport (a 2025-11-25 session; the SDK
// has no Skills helper, so skills/list, skills/get and
// resources/directory/read go through client.request with the SDK's
// ResultSchema). skills_client_test.go runs it:
//
//   BATON_NODE_DIR=DIR node skills-client.mjs URL
//
// It reads the skills extension's settings from the server's capabilities,
// pages through skills/list, reads every file of every entry with
// resources/read and checks its size and sha256 digest against the entry
// (as a host must before it uses a file), compares each entry with
// skills/get, and walks every skill's directory tree with
// resources/directory/read. It prints one JSON line:
//   {"settings","skills":[{"uri","frontmatter","files","verified","getMatches"}],
//    "directories":{uri:[child uri...]},"unknownSkillCode","notDirectoryCode",
//    "sdkVersion","protocolVersion"}
// or {"error"} with exit status 1.
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { exitWith, sdkModule, sdkVersion } from './sdk.mjs';

const [url] = process.argv.slice(2);

async function main() {
  if (!url) throw new Error('usage: node skills-client.mjs URL');
  const [{ Client }, { StreamableHTTPClientTransport }, { ResultSchema, McpError }] = await Promise.all([
    sdkModule('./client/index.js'),
    sdkModule('./client/streamableHttp.js'),
    sdkModule('./types.js'),
  ]);
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: 'baton-skills-client-test', version: '1.0.0' }, { capabilities: {} });
  const request = (method, params) => client.request({ method, params }, ResultSchema, { timeout: 20000 });
  const errorCode = async (method, params) => {
    try {
      await request(method, params);
      return null;
    } catch (err) {
      if (err instanceof McpError) return err.code;
      throw err;
    }
  };
  await client.connect(transport);
  try {
    const settings = client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/skills'];
    if (!settings) throw new Error('the server does not declare io.modelcontextprotocol/skills');

    const entries = [];
    let cursor;
    for (let page = 0; page < 100; page++) {
      const res = await request('skills/list', cursor ? { cursor } : {});
      entries.push(...res.skills);
      cursor = res.nextCursor;
      if (!cursor) break;
    }

    const skills = [];
    for (const entry of entries) {
      let verified = 0;
      for (const file of entry.resources) {
        const { contents } = await client.readResource({ uri: file.uri });
        const c = contents.find((c) => c.uri === file.uri);
        if (!c) throw new Error(`resources/read ${file.uri}: no contents for the uri`);
        const bytes = typeof c.text === 'string' ? Buffer.from(c.text, 'utf8') : Buffer.from(c.blob, 'base64');
        const digest = 'sha256:' + createHash('sha256').update(bytes).digest('hex');
        if (bytes.length !== file.size) throw new Error(`${file.uri}: ${bytes.length} bytes read, the entry says ${file.size}`);
        if (digest !== file.digest) throw new Error(`${file.uri}: digest ${digest}, the entry says ${file.digest}`);
        verified++;
      }
      const got = await request('skills/get', { uri: entry.uri });
      skills.push({
        uri: entry.uri,
        frontmatter: entry.frontmatter,
        files: entry.resources.map((r) => r.uri),
        verified,
        getMatches: isDeepStrictEqual(got.skill, entry),
      });
    }

    // Every directory of every skill, from its root down.
    const directories = {};
    const walk = async (dir) => {
      const children = [];
      let cur;
      for (let page = 0; page < 100; page++) {
        const res = await request('resources/directory/read', cur ? { uri: dir, cursor: cur } : { uri: dir });
        children.push(...res.resources);
        cur = res.nextCursor;
        if (!cur) break;
      }
      directories[dir] = children.map((c) => c.uri);
      for (const c of children) if (c.mimeType === 'inode/directory') await walk(c.uri);
    };
    for (const s of skills) await walk(s.uri.slice(0, -'/SKILL.md'.length));

    exitWith({
      settings,
      skills,
      directories,
      unknownSkillCode: await errorCode('skills/get', { uri: 'skill://no-such-skill/SKILL.md' }),
      notDirectoryCode: await errorCode('resources/directory/read', { uri: skills[0]?.uri ?? 'skill://x/SKILL.md' }),
      sdkVersion: sdkVersion(),
      protocolVersion: transport.protocolVersion ?? null,
    }, 0);
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}

main().catch((err) => exitWith({ error: err instanceof Error ? err.message : String(err) }, 1));
