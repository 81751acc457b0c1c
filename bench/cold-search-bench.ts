/**
 * `npm run bench:cold-search [-- --runs 7 --variants path,node --query "…" --k 5 --baseline DIR]`
 *
 * Wall and CPU time of a cold `gleaner search` on the embedded store: each run is a fresh process,
 * started the way a person starts it, timed by bash's `time` (real, and user + sys of the process,
 * its threads and its children). Variants, interleaved run by run so all see the same machine:
 *  - `path`: `gleaner search …`, the `gleaner` on the PATH: the README's way (setup links it to this
 *    checkout's bin/gleaner.js; the bench refuses one that leads elsewhere);
 *  - `node`: `node bin/gleaner.js search …`;
 *  - `npx`: `npx gleaner search …` in this checkout (npm's own start-up included);
 *  - `tsx`: `node bin/gleaner.js` with GLEANER_NO_BUILD=1, the sources through tsx's loader;
 *  - `baseline` (with `--baseline DIR`): `node DIR/bin/gleaner.js search …` on the same store, e.g.
 *    the commit before a change (`git archive <commit> | tar -x -C DIR`, node_modules and .tools
 *    linked; build DIR's dist/ there if it has one);
 *  - `baseline-npx`: `npx gleaner search …` in DIR (the README's way before `gleaner` was linked).
 * Each variant's output must be byte-identical run to run, or the bench fails (variants may differ from each other: a baseline commit ranks its own way). The load
 * average is printed beside every run and the CPU's model and vector flags at the top: on a shared
 * two-core machine other jobs move the wall time more than most changes do.
 *
 * Needs a filled store: `npm run demo` first (or GLEANER_HOME pointing at one), and no other gleaner
 * process holding it (a running `gleaner dev` would be attached to instead of opening the store).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'gleaner.js');
const VARIANTS = ['path', 'node', 'npx', 'tsx', 'baseline', 'baseline-npx'] as const;
type Variant = (typeof VARIANTS)[number];

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    variants: { type: 'string', default: 'path,node' },
    query: { type: 'string', default: 'how do I stop the optimization when a time budget runs out' },
    k: { type: 'string', default: '5' },
    baseline: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  // The header comment is the manual: print it rather than keep a second copy in sync.
  const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const header = source.slice(source.indexOf('/**') + 3, source.indexOf('*/'));
  console.log(header.replace(/^ ?\* ?/gm, '').trim());
  process.exit(0);
}
const runs = Number.parseInt(values.runs, 10);
if (!(runs >= 1)) throw new Error(`--runs must be a positive integer, not ${values.runs}`);
const variants = values.variants.split(',').map((name) => {
  if (!(VARIANTS as readonly string[]).includes(name))
    throw new Error(`unknown variant ${name}; expected ${VARIANTS.join(', ')}`);
  if (name.startsWith('baseline') && !values.baseline)
    throw new Error(`the ${name} variant needs --baseline DIR`);
  return name as Variant;
});
const home = path.resolve(process.env.GLEANER_HOME ?? path.join(ROOT, '.gleaner'));

/** The shell command each variant runs; $Q and $K are the query and k, $BASE the baseline checkout. */
const COMMANDS: Record<Variant, string> = {
  path: 'gleaner search "$Q" --k "$K"',
  node: `node ${JSON.stringify(BIN)} search "$Q" --k "$K"`,
  npx: 'npx gleaner search "$Q" --k "$K"',
  tsx: `GLEANER_NO_BUILD=1 node ${JSON.stringify(BIN)} search "$Q" --k "$K"`,
  baseline: 'node "$BASE/bin/gleaner.js" search "$Q" --k "$K"',
  'baseline-npx': 'cd "$BASE" && npx gleaner search "$Q" --k "$K"',
};

interface Timing {
  wallS: number;
  cpuS: number;
  load1: number;
}

function runOnce(variant: Variant): { timing: Timing; stdout: string } {
  const load1 = os.loadavg()[0] as number;
  const result = spawnSync('bash', ['-c', `TIMEFORMAT="%R %U %S"; time { ${COMMANDS[variant]}; }`], {
    cwd: ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      // The store is named explicitly, so a baseline checkout elsewhere opens the same one.
      GLEANER_HOME: home,
      BASE: values.baseline ? path.resolve(values.baseline) : '',
      Q: values.query,
      K: values.k,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.status !== 0) throw new Error(`search (${variant}) failed: ${result.stderr}`);
  const timeLine = result.stderr.trim().split('\n').at(-1) ?? '';
  const [real, user, sys] = timeLine.split(' ').map(Number);
  if (real === undefined || user === undefined || sys === undefined || Number.isNaN(real))
    throw new Error(`could not read the timing from ${JSON.stringify(result.stderr)}`);
  return { timing: { wallS: real, cpuS: user + sys, load1 }, stdout: result.stdout };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The CPU's model and the vector extensions that matter here (the embedder's int8 products). */
function cpuLine(): string {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.+)$/m.exec(info)?.[1] ?? 'unknown CPU';
  const flags = new Set(/^flags\s*:\s*(.+)$/m.exec(info)?.[1]?.split(' ') ?? []);
  const shown = ['avx2', 'fma', 'avx512f', 'avx512bw', 'avx512_vnni', 'avx_vnni'].filter((f) => flags.has(f));
  return `${model}; ${os.availableParallelism()} cores; flags ${shown.join(' ') || 'none of avx2/avx512'}`;
}

/** Where `gleaner` on the PATH leads; the `path` variant must reach this checkout. */
function gleanerOnPath(): string {
  const found = spawnSync('bash', ['-c', 'command -v gleaner'], { encoding: 'utf8' }).stdout.trim();
  if (!found)
    throw new Error(
      'no gleaner on the PATH: run `npm run setup` (it links one), or leave out the path variant',
    );
  const target = realpathSync(found);
  if (target !== realpathSync(BIN))
    throw new Error(`gleaner on the PATH (${found}) leads to ${target}, not this checkout's ${BIN}`);
  return found;
}

/** bin/current-build.js's verdict, the one bin/gleaner.js acts on. */
function buildIsCurrent(): boolean {
  return spawnSync(process.execPath, [path.join(ROOT, 'bin', 'current-build.js')]).status === 0;
}

const loadNow = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

if (!existsSync(path.join(home, 'pgdata'))) {
  throw new Error(`no embedded store in ${home}: run \`npm run demo\` first, or set GLEANER_HOME`);
}
if (existsSync(path.join(home, 'pgdata.lock'))) {
  process.stderr.write(
    `warning: ${home}/pgdata.lock exists: another gleaner process may hold the store (search would attach to it)\n`,
  );
}
process.stdout.write(
  `cold gleaner search, ${runs} runs per variant (${variants.join(', ')}), store ${home}\n`,
);
process.stdout.write(`cpu: ${cpuLine()}; node ${process.version}\n`);
process.stdout.write(
  `compiled CLI (dist/cli/): ${buildIsCurrent() ? 'current' : 'STALE or missing: `npm run build` first, or these figures are the tsx fallback'}\n`,
);
if (variants.includes('path')) process.stdout.write(`gleaner on the PATH: ${gleanerOnPath()}\n`);
for (const variant of variants) process.stdout.write(`  ${variant.padEnd(12)} ${COMMANDS[variant]}\n`);
process.stdout.write(`query "${values.query}" --k ${values.k}; load average at start ${loadNow()}\n`);

const timings = new Map<Variant, Timing[]>(variants.map((variant) => [variant, []]));
// Each variant must answer the same on every run; a baseline of another commit may rank differently
// (its search is its own), which is reported, not refused.
const expected = new Map<Variant, string>();
for (let run = 1; run <= runs; run++) {
  for (const variant of variants) {
    const { timing, stdout } = runOnce(variant);
    if (!expected.has(variant)) expected.set(variant, stdout);
    if (stdout !== expected.get(variant))
      throw new Error(`the ${variant} output differs from its first run's`);
    timings.get(variant)?.push(timing);
    process.stdout.write(
      `run ${run} ${variant.padEnd(12)}  wall ${timing.wallS.toFixed(2)} s  cpu ${timing.cpuS.toFixed(2)} s  load1 ${timing.load1.toFixed(2)}\n`,
    );
  }
}
process.stdout.write('\nvariant   wall p50 (min-max)      cpu p50 (min-max)      load1 p50\n');
for (const [variant, list] of timings) {
  const wall = list.map((t) => t.wallS);
  const cpu = list.map((t) => t.cpuS);
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;
  process.stdout.write(
    `${variant.padEnd(12)}  ${median(wall).toFixed(2)} s (${range(wall)})   ${median(cpu).toFixed(2)} s (${range(cpu)})   ${median(list.map((t) => t.load1)).toFixed(2)}\n`,
  );
}
const answers = new Set(expected.values());
if (answers.size > 1)
  process.stdout.write(
    `note: the variants' answers differ (${answers.size} distinct outputs), e.g. a baseline ranking its own way\n`,
  );
process.stdout.write(`load average at end ${loadNow()}\n`);
