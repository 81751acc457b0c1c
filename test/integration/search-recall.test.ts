/**
 * The whole pipeline end to end on real parts: crawl the skopt-0.9 site (Temporal dev server,
 * native Postgres + pgvector, the provisioned embedding model), then ask the questions written by
 * hand from the site's content (test/fixtures/skopt-questions.json) and check that the page that
 * answers each is among the top 5 hits. Hybrid search must reach recall@5 ≥ 0.9 on the 22 keyword
 * questions; recall on the paraphrased ones (issue 17's target is 0.85, not reached yet: see
 * bench/README.md) and vector-only and full-text-only recall are printed beside it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { loadDefaultEmbedder } from '../../embed/embedder';
import { hybridSearch } from '../../search/hybrid-search';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { unpackSite } from '../../testbed/sites';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

interface Question {
  q: string;
  answers: string[];
  kind: 'keyword' | 'paraphrased';
}

const QUESTIONS: Question[] = JSON.parse(
  readFileSync(
    path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/skopt-questions.json'),
    'utf8',
  ),
).questions;

let stack: TestStack;
let site: SiteServer;
let summary: CrawlSummary;

beforeAll(async () => {
  site = await serveSite(unpackSite('skopt-0.9'));
  stack = await startTestStack();
  summary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId('recall'),
    args: [{ crawlId: 'recall', seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'], maxPages: 1000 }],
  });
}, 600_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
});

describe('search over a crawled skopt-0.9 corpus', () => {
  it('indexes every fetched page with embedded chunks', async () => {
    expect(summary.status).toBe('completed');
    const counts = await stack.db.query<{
      pages: number;
      chunks: number;
      unembedded: number;
      indexed: number;
    }>(
      `SELECT (SELECT count(*)::int FROM pages) AS pages,
              (SELECT count(*)::int FROM pages WHERE indexed_at IS NOT NULL) AS indexed,
              (SELECT count(*)::int FROM chunks) AS chunks,
              (SELECT count(*)::int FROM chunks WHERE embedding IS NULL) AS unembedded`,
    );
    const row = counts.rows[0];
    expect(row?.unembedded).toBe(0);
    expect(row?.chunks).toBeGreaterThan(row?.pages ?? 0);
    expect(summary.pagesIndexed).toBe(row?.indexed);
    expect(row?.indexed).toBeGreaterThan(140);
    console.info(`recall corpus: ${row?.pages} pages, ${row?.indexed} indexed, ${row?.chunks} chunks`);
  });

  it('answers hand-written questions: hybrid recall@5 ≥ 0.9 on keyword questions, with each retriever alone beside it', async () => {
    const keyword = QUESTIONS.filter((question) => question.kind === 'keyword');
    expect(keyword.length).toBeGreaterThanOrEqual(20);
    const embedder = await loadDefaultEmbedder();
    const recall: Record<string, string> = {};
    const misses: string[] = [];
    let keywordRecall = 0;
    for (const mode of ['hybrid', 'vector', 'fulltext'] as const) {
      const found = { keyword: 0, paraphrased: 0 };
      for (const question of QUESTIONS) {
        const hits = await hybridSearch(stack.db, embedder, { query: question.q, k: 5, mode });
        const paths = hits.map((hit) => decodeURIComponent(new URL(hit.url).pathname).replace(/^\//, ''));
        if (paths.some((p) => question.answers.includes(p))) found[question.kind]++;
        else if (mode === 'hybrid') misses.push(`[${question.kind}] ${question.q} → ${paths.join(', ')}`);
      }
      const paraphrased = QUESTIONS.length - keyword.length;
      recall[mode] =
        `keyword ${(found.keyword / keyword.length).toFixed(3)}, paraphrased ${(found.paraphrased / paraphrased).toFixed(3)}`;
      if (mode === 'hybrid') keywordRecall = found.keyword / keyword.length;
    }
    console.info(
      `recall@5 over ${QUESTIONS.length} questions: hybrid ${recall.hybrid}; vector ${recall.vector}; full-text ${recall.fulltext}`,
    );
    if (misses.length > 0) console.info(`hybrid misses:\n  ${misses.join('\n  ')}`);
    expect(keywordRecall).toBeGreaterThanOrEqual(0.9);
  });
});
