/**
 * The LLM passes end to end: a crawl with `llmSummaries` on a real Temporal dev server and native
 * Postgres, workers configured (GLEANER_LLM_URL) with an OpenAI-compatible server on loopback that
 * this test starts. Every page gets two separate chat requests at temperature 0 from the
 * `gleaner-llm` queue; the page whose tag answer breaks the policy keeps its offline tags and has
 * the failure recorded; the endpoint's first 503 is retried by Temporal, not by the activity.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isValidTagSet } from '../../domain/tags';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

let stack: TestStack;
let site: SiteServer;
let llm: http.Server;
const chats: Array<{ temperature: number; system: string; user: string; status: number }> = [];

const TOPICS: Record<string, string> = {
  '/': 'Bayesian optimisation finds the minimum of an expensive function with few evaluations.',
  '/gaussian.html': 'A Gaussian process models the objective and gives an uncertainty for every point.',
  '/acquisition.html':
    'The acquisition function trades exploration against exploitation when choosing the next point.',
};

beforeAll(async () => {
  let failedOnce = false;
  llm = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const request = JSON.parse(body) as { temperature: number; messages: Array<{ content: string }> };
      const system = request.messages[0]?.content ?? '';
      const user = request.messages[1]?.content ?? '';
      // The endpoint is briefly down once: Temporal retries the activity.
      if (!failedOnce) {
        failedOnce = true;
        chats.push({ temperature: request.temperature, system, user, status: 503 });
        res.writeHead(503).end();
        return;
      }
      chats.push({ temperature: request.temperature, system, user, status: 200 });
      const isTags = system.includes('tags');
      const content = isTags
        ? user.includes('acquisition function')
          ? '#page, #home'
          : '#bayesian-optimisation, #gaussian-process, #surrogate-model, #Expensive Functions'
        : `LLM summary: ${user.split('\n').slice(0, 2).join(' ')}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content } }] }));
    });
  });
  await new Promise<void>((resolve) => llm.listen(0, '127.0.0.1', resolve));
  process.env.GLEANER_LLM_URL = `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`;
  process.env.GLEANER_LLM_MODEL = 'fake-llm';

  site = await serveSite(undefined);
  for (const [pathname, text] of Object.entries(TOPICS)) {
    const links = Object.keys(TOPICS)
      .map((p) => `<a href="${p}">${p}</a>`)
      .join(' ');
    const prose = Array.from(
      { length: 6 },
      (_, i) => `<p>${text} Paragraph ${i + 1} explains it in more words for readers.</p>`,
    );
    site.route(pathname, (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><html><head><title>${pathname}</title></head><body><main><h1>${text.split(' ').slice(0, 3).join(' ')}</h1>${prose.join('')}<nav>${links}</nav></main></body></html>`,
        );
    });
  }
  stack = await startTestStack();
}, 600_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
  await new Promise((resolve) => llm?.close(resolve));
  delete process.env.GLEANER_LLM_URL;
  delete process.env.GLEANER_LLM_MODEL;
});

describe('LLM summaries and tags in the page pipeline', () => {
  it('asks twice per page at temperature 0, stores valid answers and records the invalid one', async () => {
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId('llm-1'),
      args: [
        { crawlId: 'llm-1', seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'], llmSummaries: true },
      ],
    });
    expect(summary.status).toBe('completed');
    expect(summary.pagesIndexed).toBe(3);

    const answered = chats.filter((c) => c.status === 200);
    expect(answered).toHaveLength(6);
    expect(chats.filter((c) => c.status === 503)).toHaveLength(1);
    for (const chat of chats) expect(chat.temperature).toBe(0);
    expect(answered.filter((c) => c.system.includes('tags'))).toHaveLength(3);

    const { rows } = await stack.db.query<{
      url: string;
      summary: string;
      tags: string[];
      summary_by: string;
      tags_by: string;
      error: string | null;
    }>(
      `SELECT p.url, s.summary, s.tags, s.summary_by, s.tags_by, s.error
         FROM pages p JOIN page_summaries s ON s.page_id = p.id ORDER BY p.url`,
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row.summary_by, row.url).toBe('llm:fake-llm');
      expect(row.summary).toMatch(/^LLM summary: /);
      expect(isValidTagSet(row.tags), `${row.url}: ${row.tags.join(',')}`).toBe(true);
    }
    const invalid = rows.find((row) => row.url.endsWith('/acquisition.html'));
    expect(invalid?.tags_by).toMatch(/^extractive:/);
    expect(invalid?.error).toMatch(/^tags: 0 valid tag\(s\)/);
    for (const row of rows.filter((r) => r !== invalid)) {
      expect(row.tags_by).toBe('llm:fake-llm');
      expect(row.tags).toEqual([
        'bayesian-optimisation',
        'gaussian-process',
        'surrogate-model',
        'expensive-functions',
      ]);
      expect(row.error).toBeNull();
    }
  });
});
