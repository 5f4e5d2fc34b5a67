// Reports one conformance run the way the other SDKs report theirs:
// scenarios passed / failed / skipped, apart from checks, per group.
//
//   node scripts/conformance-report.mjs REQUIREMENTS RUN_OUTPUT RESULTS_DIR
//
// REQUIREMENTS is the requirement set the run used (a protocol version, or
// "all" for --suite all); RUN_OUTPUT is what `conformance server` printed;
// RESULTS_DIR is its -o folder, one sub-folder per scenario holding
// checks.json.
//
// A scenario passed when none of its checks failed or was skipped and at
// least one succeeded. It failed when any check failed. Otherwise it is
// skipped: a skipped check is never counted as passed (the suite's own
// summary counts a scenario whose checks were all skipped as passing).
//
// Groups: for a requirement set, "required" is what the suite scores, and
// each "Not scored" tag it prints (extension, pending, ...) is a group of
// its own; for the whole suite, scenarios group by family (tasks, skills).
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const [reqs, runOutput, resultsDir] = process.argv.slice(2);
if (!reqs || !runOutput || !resultsDir) {
  console.error('usage: conformance-report.mjs REQUIREMENTS RUN_OUTPUT RESULTS_DIR');
  process.exit(2);
}

// Tags of the scenarios the suite ran but did not score.
const notScored = new Map();
let inNotScored = false;
for (const line of readFileSync(runOutput, 'utf8').split('\n')) {
  if (line.startsWith('Not scored')) {
    inNotScored = true;
    continue;
  }
  const m = inNotScored && line.match(/^\s+\S+\s+(\S+)\s+\(([^)]+)\)\s*$/);
  if (m) notScored.set(m[1], m[2]);
}

function group(name) {
  if (reqs !== 'all') return notScored.get(name) ?? 'required';
  if (name.startsWith('tasks-')) return 'tasks (extension)';
  if (name.startsWith('sep-2640-skills-')) return 'skills (extension)';
  return 'core';
}

const statuses = ['SUCCESS', 'FAILURE', 'WARNING', 'SKIPPED', 'INFO'];
const groups = new Map();
const notPassed = [];
const dirs = existsSync(resultsDir) ? readdirSync(resultsDir) : [];
for (const dir of dirs.sort()) {
  const file = join(resultsDir, dir, 'checks.json');
  if (!existsSync(file)) continue;
  const name = dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
  const counts = Object.fromEntries(statuses.map((s) => [s, 0]));
  for (const c of JSON.parse(readFileSync(file, 'utf8'))) {
    counts[c.status] = (counts[c.status] ?? 0) + 1;
  }
  const outcome =
    counts.FAILURE > 0 ? 'failed' : counts.SKIPPED > 0 || counts.SUCCESS === 0 ? 'skipped' : 'passed';
  const g = group(name);
  if (!groups.has(g)) {
    groups.set(g, { scenarios: 0, passed: 0, failed: 0, skipped: 0, checks: Object.fromEntries(statuses.map((s) => [s, 0])) });
  }
  const row = groups.get(g);
  row.scenarios++;
  row[outcome]++;
  for (const s of statuses) row.checks[s] += counts[s];
  if (outcome !== 'passed') {
    notPassed.push(`${outcome.padEnd(7)} ${name} [${g}]: ` + statuses.filter((s) => counts[s]).map((s) => `${counts[s]} ${s.toLowerCase()}`).join(', '));
  }
}

const label = reqs === 'all' ? '--suite all' : `--requirements ${reqs}`;
console.log(`conformance report (${label}): scenarios | checks`);
console.log('  group                 scenarios passed failed skipped | success failure warning skipped info');
const order = [...groups.keys()].sort((a, b) => (a === 'required' || a === 'core' ? -1 : b === 'required' || b === 'core' ? 1 : a.localeCompare(b)));
for (const g of order) {
  const r = groups.get(g);
  const c = r.checks;
  console.log(
    `  ${g.padEnd(21)} ${String(r.scenarios).padStart(9)} ${String(r.passed).padStart(6)} ${String(r.failed).padStart(6)} ${String(r.skipped).padStart(7)} | ` +
      `${String(c.SUCCESS).padStart(7)} ${String(c.FAILURE).padStart(7)} ${String(c.WARNING).padStart(7)} ${String(c.SKIPPED).padStart(7)} ${String(c.INFO).padStart(4)}`
  );
}
for (const line of notPassed) console.log(`  ${line}`);
if (groups.size === 0) {
  console.log('  (no scenario results found)');
  process.exit(1);
}
