/**
 * The LLM summary and tag passes against an OpenAI-compatible chat server on loopback that this
 * test starts, on a real PGlite store holding a real extracted skopt page: two separate requests at
 * temperature 0, long text cut head-and-tail, the tag policy enforced on the answer, an invalid answer
 * recorded (not thrown, so never retried), and endpoint failures classified for Temporal's retries.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ApplicationFailure } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPageContent } from '../../activities/page-content';
import { createLlmActivities, headAndTail } from '../../activities/summarize-llm';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { isValidTagSet } from '../../domain/tags';
import { unpackSite } from '../../testbed/sites';

interface ChatRequest {
  model: string;
  temperature: number;
  messages: Array<{ role: string; content: string }>;
}

let db: PgliteDatabase;
let dir: string;
let server: http.Server;
let baseUrl: string;
const requests: ChatRequest[] = [];
/** What the server answers next, by pass; a number is an HTTP error status. */
let answers: { summary: string | number; tags: string | number };

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-llm-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
  await migrate(db);
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const request = JSON.parse(body) as ChatRequest;
      requests.push(request);
      const isTags = request.messages[0]?.content.includes('tags') ?? false;
      const answer = isTags ? answers.tags : answers.summary;
      if (typeof answer === 'number') {
        res.writeHead(answer, { 'content-type': 'application/json', 'retry-after': '7' });
        res.end(JSON.stringify({ error: { message: 'nope' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          model: request.model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: answer } }],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function storeExtractedPage(file: string): Promise<number> {
  const html = readFileSync(path.join(unpackSite('skopt-0.9'), file));
  const url = `http://127.0.0.1:8000/${file}`;
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_type, charset, content_hash, body_gz)
     VALUES ($1, $1, 'http://127.0.0.1:8000', 'llm', 1, 200, 'text/html', 'utf-8', $2, $3) RETURNING id`,
    [url, createHash('sha256').update(html).digest('hex'), gzipSync(html)],
  );
  const pageId = Number(rows[0]?.id);
  await createPageContent({ db }).processPageContent({ pageId });
  return pageId;
}

async function summaryRow(pageId: number) {
  const { rows } = await db.query<{
    summary: string | null;
    tags: string[];
    summary_by: string;
    tags_by: string;
    error: string | null;
  }>('SELECT summary, tags, summary_by, tags_by, error FROM page_summaries WHERE page_id = $1', [pageId]);
  return rows[0];
}

describe('LLM summary and tag passes', () => {
  it('asks twice at temperature 0 with separate prompts and stores a valid answer under the tag policy', async () => {
    const pageId = await storeExtractedPage('auto_examples/bayesian-optimization.html');
    const llm = createLlmActivities({
      db,
      llm: { url: baseUrl, model: 'test-model', apiKey: 'k1', maxInputChars: 3000 },
    });
    answers = {
      summary: 'Bayesian optimization with gp_minimize finds the minimum of a noisy function in 30 calls.',
      tags: '#Bayesian Optimization, #gaussian_process, #gp-minimize, #home, #page, #Scikit-Optimize, #acquisition-function',
    };
    requests.length = 0;
    expect(await llm.llmSummarizePage({ pageId })).toMatchObject({ valid: true });
    expect(await llm.llmTagPage({ pageId })).toMatchObject({ valid: true, count: 4 });

    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.temperature).toBe(0);
      expect(request.model).toBe('test-model');
      // Head and tail of a long page: the cut marker and no more than the budget.
      expect(request.messages[1]?.content).toContain('[…]');
      expect(request.messages[1]?.content.length).toBeLessThan(3100);
    }
    expect(requests[0]?.messages[0]?.content).not.toBe(requests[1]?.messages[0]?.content);

    const row = await summaryRow(pageId);
    expect(row?.summary).toMatch(/^Bayesian optimization with gp_minimize/);
    // Deny-listed words and the site's name (from its titles) were dropped; the rest normalised.
    expect(row?.tags).toEqual([
      'bayesian-optimization',
      'gaussian-process',
      'gp-minimize',
      'acquisition-function',
    ]);
    expect(isValidTagSet(row?.tags ?? [])).toBe(true);
    expect(row?.summary_by).toBe('llm:test-model');
    expect(row?.tags_by).toBe('llm:test-model');
    expect(row?.error).toBeNull();

    // The same extraction again: nothing is asked.
    requests.length = 0;
    expect(await llm.llmSummarizePage({ pageId })).toMatchObject({ skipped: 'unchanged' });
    expect(await llm.llmTagPage({ pageId })).toMatchObject({ skipped: 'unchanged' });
    expect(requests).toHaveLength(0);
  });

  it('records an answer that fails validation instead of throwing (so it is not retried)', async () => {
    const pageId = await storeExtractedPage('auto_examples/ask-and-tell.html');
    const llm = createLlmActivities({ db, llm: { url: `${baseUrl}/chat/completions`, model: 'm2' } });
    answers = { summary: '   ', tags: '#page, #home, #index, #a' };
    expect(await llm.llmSummarizePage({ pageId })).toEqual({ valid: false, count: 0 });
    expect(await llm.llmTagPage({ pageId })).toEqual({ valid: false, count: 0 });
    const row = await summaryRow(pageId);
    expect(row?.error).toMatch(
      /^tags: 0 valid tag\(s\), at least 3 needed; refused page \(deny-listed\), home \(deny-listed\)/,
    );
    expect(row?.tags).toEqual([]);
    expect(row?.summary).toBeNull();
  });

  it('throws a retryable failure for 429/5xx (with Retry-After) and a non-retryable one for 4xx', async () => {
    const pageId = await storeExtractedPage('auto_examples/strategy-comparison.html');
    const llm = createLlmActivities({ db, llm: { url: baseUrl, model: 'm3' } });
    answers = { summary: 503, tags: 401 };
    const unavailable = await llm.llmSummarizePage({ pageId }).catch((error: unknown) => error);
    expect(unavailable).toBeInstanceOf(ApplicationFailure);
    expect(unavailable).toMatchObject({ type: 'LlmUnavailable', nonRetryable: false, nextRetryDelay: 7000 });
    const rejected = await llm.llmTagPage({ pageId }).catch((error: unknown) => error);
    expect(rejected).toMatchObject({ type: 'LlmRequestRejected', nonRetryable: true });
    const unconfigured = createLlmActivities({ db, llm: undefined });
    await expect(unconfigured.llmTagPage({ pageId })).rejects.toMatchObject({ type: 'LlmNotConfigured' });
  });

  it('cuts long text to its head and tail', () => {
    const text = `${'a'.repeat(50)}${'b'.repeat(50)}`;
    expect(headAndTail(text, 200)).toBe(text);
    const cut = headAndTail(text, 30);
    expect(cut.startsWith('a'.repeat(20))).toBe(true);
    expect(cut.endsWith('b'.repeat(10))).toBe(true);
  });
});
