/**
 * `npm run bench:cold-search [-- --runs 5 --variants build,tsx --query "…" --k 5]`
 *
 * Wall and CPU time of a cold `gleaner search` on the embedded store: each run is a fresh
 * `node bin/gleaner.js search <query> --k 5` process, exactly what a person types, timed by bash's
 * `time` (real, and user + sys of the process and its threads). Variants, interleaved run by run so
 * both see the same machine:
 *  - `build`: the default; starts from the compiled CLI (dist/cli/) when it is current;
 *  - `tsx`: GLEANER_NO_BUILD=1, the sources through tsx's loader (what every run did before);
 *  - `baseline` (with `--baseline DIR`): another checkout's bin/gleaner.js on the same store, e.g. the
 *    commit before a change (`git archive <commit> | tar -x -C DIR`, node_modules and .tools linked).
 * The one-minute load average is printed beside every run: on a shared two-core machine other jobs
 * change the wall time far more than any change here. Each variant's output must be byte-identical
 * to the first run's, or the bench fails.
 *
 * Needs a filled store: `npm run demo` first (or GLEANER_HOME pointing at one), and no other gleaner
 * process holding it (a running `gleaner dev` would be attached to instead of opening the store).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VARIANTS = {
  build: {},
  tsx: { GLEANER_NO_BUILD: '1' },
  baseline: {},
} as const satisfies Record<string, Record<string, string>>;
type Variant = keyof typeof VARIANTS;

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    variants: { type: 'string', default: 'build,tsx' },
    query: { type: 'string', default: 'how do I stop the optimization when a time budget runs out' },
    k: { type: 'string', default: '5' },
    baseline: { type: 'string' },
  },
});
const runs = Number.parseInt(values.runs, 10);
const variants = values.variants.split(',').map((name) => {
  if (!(name in VARIANTS))
    throw new Error(`unknown variant ${name}; expected ${Object.keys(VARIANTS).join(', ')}`);
  if (name === 'baseline' && !values.baseline) throw new Error('the baseline variant needs --baseline DIR');
  return name as Variant;
});
const home = path.resolve(process.env.GLEANER_HOME ?? path.join(ROOT, '.gleaner'));

interface Timing {
  wallS: number;
  cpuS: number;
  load1: number;
}

function runOnce(variant: Variant): { timing: Timing; stdout: string } {
  const load1 = os.loadavg()[0] as number;
  const result = spawnSync(
    'bash',
    ['-c', 'TIMEFORMAT="%R %U %S"; time node bin/gleaner.js search "$Q" --k "$K" '],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: {
        ...process.env,
        ...VARIANTS[variant],
        // The store is named explicitly, so a baseline checkout elsewhere opens the same one.
        GLEANER_HOME: home,
        BIN:
          variant === 'baseline'
            ? path.join(path.resolve(values.baseline as string), 'bin', 'gleaner.js')
            : path.join(ROOT, 'bin', 'gleaner.js'),
        Q: values.query,
        K: values.k,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
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

if (!existsSync(path.join(home, 'pgdata'))) {
  throw new Error(`no embedded store in ${home}: run \`npm run demo\` first, or set GLEANER_HOME`);
}
if (existsSync(path.join(home, 'pgdata.lock'))) {
  process.stderr.write(
    `warning: ${home}/pgdata.lock exists: another gleaner process may hold the store (search would attach to it)\n`,
  );
}
process.stdout.write(
  `cold gleaner search, ${runs} runs per variant (${variants.join(', ')}), ${os.availableParallelism()} cores, store ${home}\n`,
);
process.stdout.write(
  `query "${values.query}" --k ${values.k}; load average at start ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}\n`,
);

const timings = new Map<Variant, Timing[]>(variants.map((variant) => [variant, []]));
let expected: string | undefined;
for (let run = 1; run <= runs; run++) {
  for (const variant of variants) {
    const { timing, stdout } = runOnce(variant);
    expected ??= stdout;
    if (stdout !== expected) throw new Error(`the ${variant} output differs from the first run's`);
    timings.get(variant)?.push(timing);
    process.stdout.write(
      `run ${run} ${variant.padEnd(5)}  wall ${timing.wallS.toFixed(2)} s  cpu ${timing.cpuS.toFixed(2)} s  load1 ${timing.load1.toFixed(2)}\n`,
    );
  }
}
process.stdout.write('\nvariant  wall median (min)   cpu median (min)   load1 median\n');
for (const [variant, list] of timings) {
  const wall = list.map((t) => t.wallS);
  const cpu = list.map((t) => t.cpuS);
  process.stdout.write(
    `${variant.padEnd(7)}  ${median(wall).toFixed(2)} s (${Math.min(...wall).toFixed(2)})      ${median(cpu).toFixed(2)} s (${Math.min(...cpu).toFixed(2)})     ${median(list.map((t) => t.load1)).toFixed(2)}\n`,
  );
}
process.stdout.write(
  `load average at end ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}\n`,
);
