/**
 * `npx tsx bench/extract-worst.ts --data DIR --scores FILE [--type T] [--count N]` lists, per page type,
 * the pages of a `bench:extract --scores FILE` run with the lowest F1, with precision, recall and the
 * strategy that answered. `--page ID` instead extracts that one page again and shows what it lost
 * (words of the ground truth not extracted) and what it kept too much (extracted words not in the
 * ground truth), with the extracted lines that carry most of the surplus: where to look for a rule.
 * Error analysis for the WCXB dev split; nothing here is keyed to ids or URLs.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Command, InvalidArgumentError } from 'commander';
import { decodeBody } from '../activities/http/charset';
import { extractPage } from '../extract';

interface PageScore {
  id: string;
  type: string;
  ours: number;
  oursPrecision: number;
  oursRecall: number;
  fullStrategy: string;
}

interface GroundTruth {
  id: string;
  url: string;
  page_type: string;
  main_content: string;
}

const positive = (v: string) => {
  const n = Number.parseInt(v, 10);
  if (!(n > 0)) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

const program = new Command('extract-worst')
  .requiredOption('--data <dir>', 'the WCXB dev split (ground-truth.jsonl + html/)')
  .option('--scores <file>', 'per-page scores written by `npm run bench:extract -- --scores FILE`')
  .option('--type <type>', 'only pages of this page type')
  .option('--count <n>', 'pages listed per type', positive, 10)
  .option('--page <id>', 'show the lost and surplus words of one page')
  .parse();
const opts = program.opts<{ data: string; scores?: string; type?: string; count: number; page?: string }>();

const truthFile = path.join(opts.data, 'ground-truth.jsonl');
if (!existsSync(truthFile)) program.error(`${truthFile} not found: --data must name the WCXB dev split`);

if (opts.page !== undefined) showPage(opts.page);
else if (opts.scores !== undefined) listWorst(opts.scores);
else program.error('give --scores FILE (to list the worst pages) or --page ID (to inspect one)');

function listWorst(file: string): void {
  const scores = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as PageScore)
    .filter((s) => opts.type === undefined || s.type === opts.type);
  const types = [...new Set(scores.map((s) => s.type))].sort();
  const f = (n: number) => n.toFixed(3);
  for (const type of types) {
    const group = scores.filter((s) => s.type === type).sort((a, b) => a.ours - b.ours);
    // Page-points lost: what lifting this type's pages to 1 would add to the overall mean.
    const lost = group.reduce((n, s) => n + (1 - s.ours), 0);
    process.stdout.write(`\n${type} (${group.length} pages, ${lost.toFixed(1)} page-points lost)\n`);
    process.stdout.write('  id      F1     P      R      strategy\n');
    for (const s of group.slice(0, opts.count)) {
      process.stdout.write(
        `  ${s.id.padEnd(7)} ${f(s.ours)}  ${f(s.oursPrecision)}  ${f(s.oursRecall)}  ${s.fullStrategy.slice(0, 70)}\n`,
      );
    }
  }
}

function showPage(id: string): void {
  const page = readFileSync(truthFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as GroundTruth)
    .find((p) => p.id === id);
  if (page === undefined) {
    program.error(`no page ${id} in ${truthFile}`);
    return;
  }
  const html = decodeBody(gunzipSync(readFileSync(path.join(opts.data, 'html', `${id}.html.gz`)))).text;
  const ours = extractPage(html, page.url);
  const expected = words(page.main_content);
  const got = words(ours.text);
  const lost = difference(expected, got);
  const surplus = difference(got, expected);
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(
    `${id} ${page.page_type} ${page.url}\nstrategy ${ours.strategy}\n` +
      `truth ${total(expected)} words, extracted ${total(got)}, lost ${total(lost)}, surplus ${total(surplus)}\n`,
  );
  // Lines whose words are mostly surplus: the blocks kept that the ground truth leaves out.
  const truthText = page.main_content.toLowerCase();
  process.stdout.write('\n-- extracted lines not in the ground truth --\n');
  for (const line of ours.text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || truthText.includes(trimmed.toLowerCase().slice(0, 60))) continue;
    process.stdout.write(`+ ${trimmed.slice(0, 160)}\n`);
  }
  const oursText = ours.text.toLowerCase();
  process.stdout.write('\n-- ground-truth lines not extracted --\n');
  for (const line of page.main_content.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || oursText.includes(trimmed.toLowerCase().slice(0, 60))) continue;
    process.stdout.write(`- ${trimmed.slice(0, 160)}\n`);
  }
}

function words(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) {
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}

function difference(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [word, count] of a) {
    const left = count - (b.get(word) ?? 0);
    if (left > 0) out.set(word, left);
  }
  return out;
}
