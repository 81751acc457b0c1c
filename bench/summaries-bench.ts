/**
 * The offline summary and tags of every HTML page of a site folder, the way the page pipeline makes
 * them (extract → chunk → embed chunks → summarise against their mean), without Temporal or a
 * database: how many pages get 3-12 valid tags, how many a summary, the summariser's model calls and
 * CPU per page, and a sample to read.
 *
 *   npx tsx bench/summaries-bench.ts skopt-0.9|peroxide-docs|doc-weight [--pages 40] [--limit N]
 *     [--sample 20] [--compare]
 *
 * `doc-weight` is the generated site of bench/lib/doc-weight-site.ts (no sentence repeats across
 * pages, so the summariser's vector reuse never hits on sentences). `--compare` runs, page by page,
 * the old summariser (every one of the first 40 sentences and 40 phrase candidates embedded) beside
 * the session-20 one (lexical shortlists, the shortlisted sentences embedded) and the current one
 * (the same shortlists, each sentence judged by the vector of the chunk it came from), each with its
 * own vector reuse cache, and prints calls, CPU
 * and the quality counts of both, the share of pages with an identical summary, the mean Jaccard of
 * the tag sets and the model's mean relevance of the chosen summary sentences. Chunk vectors (not
 * measured) come from the recall bench's on-disk cache.
 */

import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { embeddingText } from '../activities/embed-chunks';
import { analysePage } from '../activities/page-analysis';
import {
  embedReusing,
  type OfflineSummary,
  type SummarizeOptions,
  siteNamesOf,
  summarizeText,
  summaryOrDescription,
} from '../activities/summarize-offline';
import { headingTitle } from '../domain/chunking';
import { centroid, dot, proseOf, proseSentences } from '../domain/key-phrases';
import { isValidTagSet } from '../domain/tags';
import { loadDefaultEmbedder, type TextEmbedder } from '../embed/embedder';
import type { SiteServer } from '../testbed/site-server';
import { unpackSite } from '../testbed/sites';
import { addDocWeightPages } from './lib/doc-weight-site';
import { htmlFiles } from './lib/html-files';
import { cachingEmbedder } from './search-recall';

const args = process.argv.slice(2);
function fail(message: string): never {
  process.stderr.write(`bench:summaries: ${message}\n`);
  process.exit(2);
}
function option(name: string): string | undefined {
  const at = args.indexOf(name);
  if (at === -1) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith('--')) fail(`${name} needs a value`);
  return value;
}
function positive(name: string, fallback: number): number {
  const raw = option(name);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1) fail(`${name} must be a positive integer, got ${raw}`);
  return value;
}
const siteName = args[0] && !args[0].startsWith('--') ? args[0] : 'skopt-0.9';
const sampleSize = positive('--sample', 20);
const limit = option('--limit') === undefined ? undefined : positive('--limit', 1);
const compare = args.includes('--compare');
const origin = 'http://127.0.0.1:8000';

/** The site's HTML documents, by URL. */
function siteDocuments(): Array<{ url: string; html: Buffer }> {
  if (siteName === 'doc-weight') {
    // The generated pages without a server: the bench only needs their HTML.
    const handlers = new Map<string, Parameters<SiteServer['route']>[1]>();
    addDocWeightPages(
      {
        route: (p: string, handler: Parameters<SiteServer['route']>[1]) => handlers.set(p, handler),
      } as unknown as SiteServer,
      positive('--pages', 40),
    );
    return [...handlers].map(([pathname, handler]) => {
      let body = '';
      const response = { writeHead: () => ({ end: (text: string) => (body = text) }) };
      handler({} as never, response as never);
      return { url: `${origin}${pathname}`, html: Buffer.from(body) };
    });
  }
  const root = unpackSite(siteName);
  return htmlFiles(root, (name) => name.startsWith('_')).map((file) => ({
    url: `${origin}/${path.relative(root, file).split(path.sep).join('/')}`,
    html: readFileSync(file),
  }));
}

/** The real model, counting the texts it runs (after the summariser's own reuse of vectors). */
function counting(real: TextEmbedder): TextEmbedder & { calls: number } {
  const wrapped = {
    identity: real.identity,
    tokenizer: real.tokenizer,
    maxTokens: real.maxTokens,
    calls: 0,
    embed(texts: readonly string[], kind?: Parameters<TextEmbedder['embed']>[1]) {
      wrapped.calls += texts.length;
      return real.embed(texts, kind);
    },
  };
  return wrapped;
}

interface Arm {
  name: string;
  options: SummarizeOptions;
  /** Given the page's chunks and their vectors, as summarizePage gives them. */
  chunkVectors?: boolean;
  embedder: TextEmbedder & { calls: number };
  cpuMs: number;
  calls: number;
  made: Array<OfflineSummary & { stored: string | null; valid: boolean; relevance: number | null }>;
}

const real = await loadDefaultEmbedder();
const chunkEmbedder = cachingEmbedder(real);
const arms: Arm[] = [
  ...(compare
    ? [
        {
          name: 'before (40 + 40 embedded)',
          options: { sentenceShortlist: 40, phraseShortlist: 40, embedSentencesAlways: true },
        },
      ]
    : []),
  ...(compare ? [{ name: 'shortlists, sentences embedded (session 20)', options: {} }] : []),
  { name: 'shortlists, sentences by their chunk vectors (default)', options: {}, chunkVectors: true },
].map((arm) => ({ ...arm, embedder: counting(real), cpuMs: 0, calls: 0, made: [] }));
const documents = siteDocuments().slice(0, limit);
const pages: Array<{ url: string; title: string | undefined }> = [];
const loadAtStart = os.loadavg();
const started = performance.now();
for (const document of documents) {
  const analysis = await analysePage({
    bodyGz: gzipSync(document.html),
    charset: 'utf-8',
    url: document.url,
    noindex: false,
  });
  if (analysis.chunks.length === 0) continue;
  const title = analysis.extracted.title;
  const vectors = await chunkEmbedder.embed(
    analysis.chunks.map((c) =>
      embeddingText({ title: title ?? null, heading_path: c.headingPath.map(headingTitle), content: c.text }),
    ),
  );
  const pageVector = centroid(vectors);
  const chunks = analysis.chunks.map((c, i) => ({ text: c.text, vector: vectors[i] as Float32Array }));
  const metadata = { ...analysis.extracted.metadata };
  const siteNames = siteNamesOf({ origin, title: title ?? null, metadata });
  const { markdown } = analysis.extracted;
  pages.push({ url: document.url, title });
  // Alternate which arm goes first, so neither is always the one on a cold cache line or a busier second.
  const order = pages.length % 2 === 0 ? arms : [...arms].reverse();
  for (const arm of order) {
    const callsBefore = arm.embedder.calls;
    const cpu = process.cpuUsage();
    const options = arm.chunkVectors ? { ...arm.options, chunks } : arm.options;
    const made = await summarizeText(arm.embedder, pageVector, markdown, siteNames, options);
    const used = process.cpuUsage(cpu);
    arm.cpuMs += (used.user + used.system) / 1000;
    arm.calls += arm.embedder.calls - callsBefore;
    arm.made.push({
      ...made,
      // As summarizePage stores it: the extractive pick, else the page's meta description.
      stored: summaryOrDescription(made.summary, metadata),
      valid: isValidTagSet(made.tags, siteNames),
      relevance: null,
    });
  }
  if (compare) {
    // The model's relevance of each arm's chosen sentences, from the old arm's vectors (it embedded
    // every pool sentence, so these are reused, not run; counted outside the figures above).
    const reference = arms[0] as Arm;
    const pool = proseSentences(proseOf(markdown), 40);
    for (const arm of arms) {
      const entry = arm.made[arm.made.length - 1];
      if (!entry?.summary) continue;
      const chosen = pool.filter((s) => entry.summary?.includes(s));
      if (chosen.length === 0) continue;
      const calls = reference.embedder.calls;
      const chosenVectors = await embedReusing(reference.embedder, chosen);
      reference.embedder.calls = calls;
      entry.relevance = chosenVectors.reduce((sum, v) => sum + dot(v, pageVector), 0) / chosen.length;
    }
  }
}
const seconds = (performance.now() - started) / 1000;
const n = Math.max(1, pages.length);
const flags = readFileSync('/proc/cpuinfo', 'utf8').match(/avx512_vnni|avx512f|avx2/g) ?? [];
const load = (values: number[]) => values.map((v) => v.toFixed(2)).join(' ');
const summaryOf = (arm: Arm) => {
  const withRelevance = arm.made.filter((m) => m.relevance !== null);
  return {
    arm: arm.name,
    modelCallsPerPage: Number((arm.calls / n).toFixed(2)),
    summarizerCpuMsPerPage: Number((arm.cpuMs / n).toFixed(1)),
    pagesWithValidTags: arm.made.filter((m) => m.valid).length,
    pagesWithSummary: arm.made.filter((m) => m.stored).length,
    pagesWithExtractiveSummary: arm.made.filter((m) => m.summary).length,
    meanTags: Number((arm.made.reduce((sum, m) => sum + m.tags.length, 0) / n).toFixed(2)),
    ...(compare && withRelevance.length > 0
      ? {
          meanSentenceRelevance: Number(
            (withRelevance.reduce((sum, m) => sum + (m.relevance ?? 0), 0) / withRelevance.length).toFixed(3),
          ),
        }
      : {}),
  };
};
const result: Record<string, unknown> = {
  site: siteName,
  pages: pages.length,
  ...summaryOf(arms[arms.length - 1] as Arm),
  seconds: Math.round(seconds),
  load: `${load(loadAtStart)} → ${load(os.loadavg())}`,
  cpu: [...new Set(flags)].join(' ') || 'no avx2',
};
/** How far `after` is from `before`: identical summaries, tag-set overlap, model calls and CPU cut. */
function against(before: Arm, after: Arm) {
  let identical = 0;
  let jaccard = 0;
  before.made.forEach((old, i) => {
    const now = after.made[i];
    if (!now) return;
    if (now.stored === old.stored) identical += 1;
    const union = new Set([...old.tags, ...now.tags]);
    jaccard += union.size === 0 ? 1 : now.tags.filter((t) => old.tags.includes(t)).length / union.size;
  });
  return {
    identicalSummaryShare: Number((identical / n).toFixed(3)),
    meanTagJaccard: Number((jaccard / n).toFixed(3)),
    modelCallsCut: Number((1 - after.calls / Math.max(1, before.calls)).toFixed(3)),
    cpuCut: Number((1 - after.cpuMs / Math.max(1e-9, before.cpuMs)).toFixed(3)),
  };
}
if (compare) {
  const [before, embedded, after] = arms as [Arm, Arm, Arm];
  result.before = summaryOf(before);
  Object.assign(result, against(before, after));
  result.sentencesEmbedded = summaryOf(embedded);
  result.againstSentencesEmbedded = against(embedded, after);
}
process.stdout.write(`${JSON.stringify(result)}\n`);
const current = arms[arms.length - 1] as Arm;
const step = Math.max(1, Math.floor(pages.length / sampleSize));
for (const [i, page] of pages.entries()) {
  if (i % step !== 0 || i / step >= sampleSize) continue;
  const made = current.made[i];
  process.stdout.write(
    `\n${page.url.replace(origin, '')}  (${page.title ?? ''})\n  tags: ${made?.tags.map((t) => `#${t}`).join(' ')}\n  summary: ${made?.stored}\n`,
  );
}
