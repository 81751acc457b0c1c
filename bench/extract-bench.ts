/**
 * `npm run bench:extract [-- --limit N --type T --no-baseline --dom linkedom|jsdom --strategy auto|chain|readability --scores out.jsonl]`
 *
 * Scores gleaner's extractor and bare Readability (same DOM, same run) on the WCXB development split
 * (`--data DIR`, the folder holding ground-truth.jsonl and html/; get it from
 * https://github.com/Murrough-Foley/web-content-extraction-benchmark, CC-BY-4.0): per page, the F1 of the lower-cased word multisets (`\w+` in the Unicode
 * sense, as Python's `re` reads it) of the extracted text against the hand-checked main content; the
 * mean over pages, overall and per page type, with mean precision and recall beside it; and median and p95 milliseconds per page. Prints a table,
 * then one JSON line. Pages are read in id order; nothing here is keyed to ids or URLs. The npm script
 * gives V8 the young generation the product's page-analysis threads get
 * (`--max-semi-space-size=32` ≙ `maxYoungGenerationSizeMb: 96` in activities/page-analysis-pool.ts);
 * bare Readability runs under the same setting.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Readability } from '@mozilla/readability';
import { Command, InvalidArgumentError, Option } from 'commander';
import { decodeBody } from '../activities/http/charset';
import { DOM_KINDS, type DomKind, extractPage } from '../extract';
import { parseDocument } from '../extract/dom';

interface GroundTruth {
  id: string;
  url: string;
  page_type: string;
  main_content: string;
}

interface PageScore {
  id: string;
  type: string;
  ours: number;
  oursPrecision: number;
  oursRecall: number;
  baseline: number;
  oursMs: number;
  /** CPU time of the process during our extraction: on a loaded machine, closer to one core's cost than wall time. */
  oursCpuMs: number;
  baselineMs: number;
  strategy: string;
  fullStrategy: string;
}

const program = new Command('extract-bench')
  .option('--limit <n>', 'only the first N pages', (v) => {
    const n = Number.parseInt(v, 10);
    if (!(n > 0)) throw new InvalidArgumentError('expected a positive integer');
    return n;
  })
  .addOption(new Option('--dom <kind>', 'DOM implementation').choices(DOM_KINDS).default('linkedom'))
  .addOption(
    new Option('--strategy <s>', 'force one stage of our pipeline')
      .choices(['auto', 'chain', 'readability'])
      .default('auto'),
  )
  .option('--type <type>', 'only pages of this page type')
  .option('--no-baseline', 'skip bare Readability (quicker loops; its column then scores an empty answer)')
  .option('--scores <file>', 'write one JSON line per page (id, type, F1s, ms, strategy) for error analysis')
  .requiredOption(
    '--data <dir>',
    'the WCXB dev split (ground-truth.jsonl + html/), from https://github.com/Murrough-Foley/web-content-extraction-benchmark',
  )
  .parse();
const opts = program.opts<{
  limit?: number;
  type?: string;
  scores?: string;
  baseline: boolean;
  dom: DomKind;
  strategy: 'auto' | 'chain' | 'readability';
  data: string;
}>();

const truthFile = path.join(opts.data, 'ground-truth.jsonl');
if (!existsSync(truthFile)) {
  program.error(
    `${truthFile} not found: --data must name the WCXB dev split (https://github.com/Murrough-Foley/web-content-extraction-benchmark)`,
  );
}
const truth = readFileSync(truthFile, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as GroundTruth)
  .filter((page) => opts.type === undefined || page.page_type === opts.type)
  .slice(0, opts.limit);

const scores: PageScore[] = [];
for (const [index, page] of truth.entries()) {
  const bytes = gunzipSync(readFileSync(path.join(opts.data, 'html', `${page.id}.html.gz`)));
  const html = decodeBody(bytes).text;
  const expected = words(page.main_content);

  let started = performance.now();
  const cpuStart = process.cpuUsage();
  const ours = extractPage(html, page.url, { dom: opts.dom, strategy: opts.strategy });
  const oursMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);
  const oursCpuMs = (cpu.user + cpu.system) / 1000;

  started = performance.now();
  const baselineText = opts.baseline ? bareReadability(html, page.url, opts.dom) : '';
  const baselineMs = performance.now() - started;

  const oursScore = score(words(ours.text), expected);
  scores.push({
    id: page.id,
    type: page.page_type,
    ours: oursScore.f1,
    oursPrecision: oursScore.precision,
    oursRecall: oursScore.recall,
    baseline: score(words(baselineText), expected).f1,
    oursMs,
    oursCpuMs,
    baselineMs,
    strategy: ours.strategy.replace(/^(selector|repeated):[^+]*/, '$1'),
    fullStrategy: ours.strategy,
  });
  if ((index + 1) % 100 === 0) process.stderr.write(`${index + 1}/${truth.length}\n`);
}

function bareReadability(html: string, url: string, dom: DomKind): string {
  try {
    const doc = parseDocument(html, url, dom);
    return new Readability(doc).parse()?.textContent ?? '';
  } catch {
    return '';
  }
}

function words(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) {
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}

interface Score {
  precision: number;
  recall: number;
  f1: number;
}

/** Precision, recall and F1 of the word multisets; an empty answer to an empty truth is perfect. */
function score(predicted: Map<string, number>, expected: Map<string, number>): Score {
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const p = total(predicted);
  const e = total(expected);
  if (p === 0 && e === 0) return { precision: 1, recall: 1, f1: 1 };
  let overlap = 0;
  for (const [word, count] of predicted) overlap += Math.min(count, expected.get(word) ?? 0);
  const precision = p === 0 ? 0 : overlap / p;
  const recall = e === 0 ? 0 : overlap / e;
  if (overlap === 0) return { precision, recall, f1: 0 };
  return { precision, recall, f1: (2 * precision * recall) / (precision + recall) };
}

const mean = (values: number[]) =>
  values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}
const round = (n: number, digits = 4) => Math.round(n * 10 ** digits) / 10 ** digits;

const types = [...new Set(scores.map((s) => s.type))].sort();
const byType = Object.fromEntries(
  types.map((type) => {
    const group = scores.filter((s) => s.type === type);
    return [
      type,
      {
        pages: group.length,
        ours: round(mean(group.map((s) => s.ours))),
        precision: round(mean(group.map((s) => s.oursPrecision))),
        recall: round(mean(group.map((s) => s.oursRecall))),
        readability: round(mean(group.map((s) => s.baseline))),
      },
    ];
  }),
);
const strategies: Record<string, number> = {};
for (const s of scores) strategies[s.strategy] = (strategies[s.strategy] ?? 0) + 1;
const summary = {
  pages: scores.length,
  dom: opts.dom,
  strategy: opts.strategy,
  loadavg: os.loadavg().map((n) => round(n, 2)),
  f1: {
    ours: round(mean(scores.map((s) => s.ours))),
    oursPrecision: round(mean(scores.map((s) => s.oursPrecision))),
    oursRecall: round(mean(scores.map((s) => s.oursRecall))),
    readability: round(mean(scores.map((s) => s.baseline))),
  },
  byType,
  ms: {
    ours: {
      median: round(
        percentile(
          scores.map((s) => s.oursMs),
          0.5,
        ),
        1,
      ),
      p95: round(
        percentile(
          scores.map((s) => s.oursMs),
          0.95,
        ),
        1,
      ),
    },
    oursCpu: {
      median: round(
        percentile(
          scores.map((s) => s.oursCpuMs),
          0.5,
        ),
        1,
      ),
      p95: round(
        percentile(
          scores.map((s) => s.oursCpuMs),
          0.95,
        ),
        1,
      ),
    },
    readability: {
      median: round(
        percentile(
          scores.map((s) => s.baselineMs),
          0.5,
        ),
        1,
      ),
      p95: round(
        percentile(
          scores.map((s) => s.baselineMs),
          0.95,
        ),
        1,
      ),
    },
  },
  strategies,
};

const row = (cells: (string | number)[]) => cells.map((c, i) => String(c).padEnd(i === 0 ? 15 : 12)).join('');
const lines = [
  row(['page type', 'pages', 'gleaner F1', 'precision', 'recall', 'readability']),
  row([
    'overall',
    summary.pages,
    summary.f1.ours,
    summary.f1.oursPrecision,
    summary.f1.oursRecall,
    summary.f1.readability,
  ]),
  ...types.map((t) => {
    const group = byType[t];
    return row([
      t,
      group?.pages ?? 0,
      group?.ours ?? 0,
      group?.precision ?? 0,
      group?.recall ?? 0,
      group?.readability ?? 0,
    ]);
  }),
  '',
  row(['ms per page', 'median', 'p95']),
  row(['gleaner', summary.ms.ours.median, summary.ms.ours.p95]),
  row(['gleaner cpu', summary.ms.oursCpu.median, summary.ms.oursCpu.p95]),
  row(['readability', summary.ms.readability.median, summary.ms.readability.p95]),
  '',
  `strategies: ${JSON.stringify(strategies)}  (dom ${opts.dom})`,
  `load average at the end: ${summary.loadavg.join(' ')} (1, 5, 15 min; ${os.cpus().length} cores)`,
];
process.stdout.write(`${lines.join('\n')}\n${JSON.stringify(summary)}\n`);
if (opts.scores) writeFileSync(opts.scores, `${scores.map((s) => JSON.stringify(s)).join('\n')}\n`);
