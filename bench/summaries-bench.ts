/**
 * The offline summary and tags of every HTML page of a site folder, the way the page pipeline makes
 * them (extract → chunk → embed chunks → summarise against their mean), without Temporal or a
 * database: how many pages get 3-12 valid tags, how long it takes, and a sample to read.
 *
 *   npx tsx bench/summaries-bench.ts skopt-0.9 [--sample 20] [--json]
 */

import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { embeddingText } from '../activities/embed-chunks';
import { analysePage } from '../activities/page-analysis';
import { siteNamesOf, summarizeText, summaryOrDescription } from '../activities/summarize-offline';
import { headingTitle } from '../domain/chunking';
import { centroid } from '../domain/key-phrases';
import { isValidTagSet } from '../domain/tags';
import { loadDefaultEmbedder } from '../embed/embedder';
import { unpackSite } from '../testbed/sites';
import { htmlFiles } from './lib/html-files';

const args = process.argv.slice(2);
const siteName = args[0] ?? 'skopt-0.9';
const sampleSize = Number(args[args.indexOf('--sample') + 1] || 20);
const root = unpackSite(siteName);
const origin = 'http://127.0.0.1:8000';

const embedder = await loadDefaultEmbedder();
const limitAt = args.indexOf('--limit');
const files = htmlFiles(root, (name) => name.startsWith('_')).slice(
  0,
  limitAt === -1 ? undefined : Number(args[limitAt + 1]),
);
let valid = 0;
let withSummary = 0;
let withExtractiveSummary = 0;
let pages = 0;
const tagCounts: number[] = [];
const samples: Array<{ url: string; title: string | undefined; summary: string | null; tags: string[] }> = [];
const started = performance.now();
for (const file of files) {
  const url = `${origin}/${path.relative(root, file).split(path.sep).join('/')}`;
  const analysis = await analysePage({
    bodyGz: gzipSync(readFileSync(file)),
    charset: 'utf-8',
    url,
    noindex: false,
  });
  if (analysis.chunks.length === 0) continue;
  pages += 1;
  const vectors = await embedder.embed(
    analysis.chunks.map((c) =>
      embeddingText({
        title: analysis.extracted.title ?? null,
        heading_path: c.headingPath.map(headingTitle),
        content: c.text,
      }),
    ),
  );
  const title = analysis.extracted.title;
  const siteNames = siteNamesOf({
    origin,
    title: title ?? null,
    metadata: { ...analysis.extracted.metadata },
  });
  const made = await summarizeText(embedder, centroid(vectors), analysis.extracted.markdown, siteNames);
  if (isValidTagSet(made.tags, siteNames)) valid += 1;
  // As summarizePage stores it: the extractive pick, else the page's meta description.
  const summary = summaryOrDescription(made.summary, { ...analysis.extracted.metadata });
  if (made.summary) withExtractiveSummary += 1;
  if (summary) withSummary += 1;
  tagCounts.push(made.tags.length);
  samples.push({ url, title, summary, tags: made.tags });
}
const seconds = (performance.now() - started) / 1000;
const step = Math.max(1, Math.floor(samples.length / sampleSize));
const result = {
  site: siteName,
  pages,
  pagesWithValidTags: valid,
  pagesWithSummary: withSummary,
  pagesWithExtractiveSummary: withExtractiveSummary,
  meanTags: tagCounts.reduce((a, b) => a + b, 0) / Math.max(1, tagCounts.length),
  seconds: Math.round(seconds),
  loadavg: os.loadavg().map((n) => n.toFixed(2)),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
for (const sample of samples.filter((_, i) => i % step === 0).slice(0, sampleSize)) {
  process.stdout.write(
    `\n${sample.url.replace(origin, '')}  (${sample.title ?? ''})\n  tags: ${sample.tags.map((t) => `#${t}`).join(' ')}\n  summary: ${sample.summary}\n`,
  );
}
