/**
 * Passages an LLM can cite (search/context.ts) on a hand-made corpus searched by words (no vectors,
 * so every rank follows from the texts): numbering, neighbours merged without the chunker's overlap,
 * near duplicates dropped, the per-page cap, the token budget counted with the model's real
 * tokenizer; page summaries as a field of their own; then `GET /context` and `gleaner context`
 * (a child process on the same store), bad parameters included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSearchService } from '../../api/search-service';
import { buildApiServer } from '../../api/server';
import type { Database } from '../../db/database';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { loadTokenizer, type Tokenizer } from '../../embed/tokenizer';
import { assembleContext, type ContextResult, joinWithoutOverlap } from '../../search/context';
import { SearchParamsError, searchCorpus } from '../../search/hybrid-search';
import { runGleaner } from '../../testbed/gleaner-process';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const OVERLAP = 'The kalman gain weighs each new measurement against the prediction.';

interface Page {
  url: string;
  title: string;
  chunks: Array<{ heading: string[]; text: string }>;
  summary?: string;
}

const PAGES: Page[] = [
  {
    url: 'http://docs.test/filters/kalman.html',
    title: 'Kalman filters',
    chunks: [
      {
        heading: ['Kalman', 'Predict'],
        text: `A kalman filter first predicts the state and its covariance. ${OVERLAP}`,
      },
      // Starts with the sentence the chunker carried over from the end of chunk 0.
      { heading: ['Kalman', 'Update'], text: `${OVERLAP} Then the kalman filter updates the covariance.` },
      { heading: ['Install'], text: 'Install the package with pip before anything else.' },
      {
        heading: ['Kalman', 'Smoother'],
        text: 'A kalman smoother runs backwards over the kalman filter output.',
      },
    ],
  },
  {
    url: 'http://docs.test/api/many.html',
    title: 'Kalman API reference',
    chunks: [
      { heading: ['API', 'predict'], text: 'kalman filter predict(state) returns the next state.' },
      { heading: ['API', 'notes'], text: 'Notes on numerical stability of square-root forms.' },
      { heading: ['API', 'update'], text: 'kalman filter update(measurement) corrects the state.' },
      { heading: ['API', 'notes'], text: 'Notes on the Joseph form of the covariance update.' },
      { heading: ['API', 'gain'], text: 'kalman filter gain() returns the last kalman gain matrix.' },
      { heading: ['API', 'notes'], text: 'Notes on fixed-lag smoothing windows.' },
      { heading: ['API', 'reset'], text: 'kalman filter reset() forgets every measurement.' },
    ],
  },
  {
    // A mirror: the same smoother text as the first page, word for word.
    url: 'http://mirror.test/filters/kalman.html',
    title: 'Kalman filters (mirror)',
    chunks: [
      {
        heading: ['Kalman', 'Smoother'],
        text: 'A kalman smoother runs backwards over the kalman filter output.',
      },
    ],
  },
  {
    // No chunk says "quaternion"; the summary does.
    url: 'http://docs.test/rotations.html',
    title: 'Rotations',
    chunks: [
      { heading: ['Rotations'], text: 'Rotations in three dimensions compose by multiplication.' },
      {
        heading: ['Rotations', 'Gimbal lock'],
        text: 'Euler angles lose a degree of freedom at gimbal lock.',
      },
    ],
    summary: 'How to represent rotations with quaternions instead of Euler angles.',
  },
  {
    url: 'http://docs.test/algebra.html',
    title: 'Algebra',
    chunks: [{ heading: ['Algebra'], text: 'A quaternion has one real and three imaginary parts.' }],
  },
];

async function loadPages(db: Database): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const page of PAGES) {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, title) VALUES ($1, $1, $2, 'c1', 0, $3) RETURNING id`,
      [page.url, new URL(page.url).origin, page.title],
    );
    const pageId = Number(rows[0]?.id);
    for (const [position, chunk] of page.chunks.entries()) {
      const inserted = await db.query<{ id: string }>(
        `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count)
         VALUES ($1, $2::int, md5($4 || $2::text), $3, array_to_string($3::text[], ' > '), $4, 10) RETURNING id`,
        [pageId, position, chunk.heading, chunk.text],
      );
      ids.set(`${page.url}#${position}`, Number(inserted.rows[0]?.id));
    }
    if (page.summary) {
      await db.query(
        `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by, summary) VALUES ($1, 'h', 'test', 'test', $2)`,
        [pageId, page.summary],
      );
    }
  }
  return ids;
}

const home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-context-'));
let db: PgliteDatabase;
let ids: Map<string, number>;
let tokenizer: Tokenizer;
const KALMAN = 'http://docs.test/filters/kalman.html';
const MANY = 'http://docs.test/api/many.html';
const MIRROR = 'http://mirror.test/filters/kalman.html';

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
  await migrate(db);
  ids = await loadPages(db);
});
afterAll(async () => {
  await db?.close().catch(() => {});
  rmSync(home, { recursive: true, force: true });
});

describe('assembleContext', () => {
  let result: ContextResult;
  beforeAll(async () => {
    result = await assembleContext(db, undefined, { question: 'kalman filter', tokenizer });
  });

  it('numbers passages in rank order, each rendered with title, URL and heading path', () => {
    expect(result.mode).toBe('fulltext');
    expect(result.passages.map((p) => p.n)).toEqual(result.passages.map((_, i) => i + 1));
    expect(result.passages.length).toBeGreaterThanOrEqual(3);
    for (const passage of result.passages) {
      expect(result.text).toContain(
        `[${passage.n}] ${passage.title} — ${passage.url}\n${passage.headingPath.join(' > ')}\n${passage.text}`,
      );
    }
    const scores = result.passages.map((p) => p.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('merges neighbouring chunks of a page into one passage, the overlap once', () => {
    const merged = result.passages.find((p) => p.chunkIds.length > 1);
    expect(merged?.url).toBe(KALMAN);
    expect(merged?.chunkIds).toEqual([ids.get(`${KALMAN}#0`), ids.get(`${KALMAN}#1`)]);
    expect(merged?.text.split(OVERLAP).length).toBe(2);
    expect(merged?.text).toMatch(/^A kalman filter first predicts[\s\S]*updates the covariance\.$/);
    // The heading path the two chunks share.
    expect(merged?.headingPath).toEqual(['Kalman']);
  });

  it('keeps one of two passages that say the same thing', () => {
    const smoother = result.passages.filter((p) => p.text.startsWith('A kalman smoother'));
    expect(smoother).toHaveLength(1);
    expect([KALMAN, MIRROR]).toContain(smoother[0]?.url);
  });

  it('takes at most maxPerPage passages from a page', async () => {
    // The API page has four matching chunks, none neighbours.
    const all = await searchCorpus(db, undefined, { query: 'kalman filter', k: 20, perPage: 10 });
    expect(all.hits.filter((hit) => hit.url === MANY).length).toBe(4);
    const perPage = (r: ContextResult, url: string) => r.passages.filter((p) => p.url === url).length;
    expect(perPage(result, MANY)).toBe(2);
    const one = await assembleContext(db, undefined, { question: 'kalman filter', maxPerPage: 1, tokenizer });
    for (const url of [KALMAN, MANY]) expect(perPage(one, url)).toBe(1);
  });

  it('stays within the token budget, counted with the model tokenizer', async () => {
    let previous = 0;
    for (const budget of [50, 80, 150, 400, 2000]) {
      const r = await assembleContext(db, undefined, {
        question: 'kalman filter',
        budgetTokens: budget,
        tokenizer,
      });
      expect(r.budgetTokens).toBe(budget);
      expect(r.usedTokens).toBe(tokenizer.countTokens(r.text));
      expect(r.usedTokens).toBeLessThanOrEqual(budget);
      expect(r.passages.length).toBeGreaterThanOrEqual(previous);
      expect(r.passages.length).toBeGreaterThan(0);
      previous = r.passages.length;
    }
    // The default tokenizer (loaded by the module itself) counts the same.
    const byDefault = await assembleContext(db, undefined, { question: 'kalman filter', budgetTokens: 150 });
    expect(byDefault.usedTokens).toBe(tokenizer.countTokens(byDefault.text));
    expect(byDefault.notes).toEqual(result.notes);
  });

  it('cuts the first passage to fit a budget smaller than it', async () => {
    const r = await assembleContext(db, undefined, {
      question: 'kalman filter',
      budgetTokens: 50,
      tokenizer,
    });
    expect(r.passages).toHaveLength(1);
    expect(r.passages[0]?.text.endsWith(' …')).toBe(true);
    expect(r.usedTokens).toBeLessThanOrEqual(50);
  });

  it('refuses bad parameters with a reason', async () => {
    const bad = [
      [{ budgetTokens: 49 }, /budgetTokens must be a whole number from 50 to 32000, got 49/],
      [{ budgetTokens: 32_001 }, /budgetTokens/],
      [{ budgetTokens: 1.5 }, /budgetTokens/],
      [{ maxPerPage: 0 }, /maxPerPage must be a whole number from 1 to 10, got 0/],
      [{ maxPerPage: 11 }, /maxPerPage/],
      [{ question: '  ' }, /the query must be a non-empty string/],
      [{ domain: 'http://x/y' }, /domain/],
    ] as const;
    for (const [params, message] of bad) {
      const attempt = assembleContext(db, undefined, { question: 'kalman', tokenizer, ...params });
      await expect(attempt).rejects.toThrow(SearchParamsError);
      await expect(attempt).rejects.toThrow(message);
    }
  });

  it('joins neighbours without their overlap, and with a blank line when there is none', () => {
    expect(joinWithoutOverlap('One two three. Four five six seven.', 'Four five six seven. Eight.')).toBe(
      'One two three.\nFour five six seven. Eight.',
    );
    expect(joinWithoutOverlap('Alpha beta gamma.', 'Delta epsilon zeta.')).toBe(
      'Alpha beta gamma.\n\nDelta epsilon zeta.',
    );
  });
});

describe('page summaries as a field of their own', () => {
  it("finds a page by its summary's words, below a chunk that holds them itself", async () => {
    const { hits } = await searchCorpus(db, undefined, { query: 'quaternion', k: 5 });
    // The chunk's own words (weight B, 0.4) outrank the summary's (weight C, 0.2).
    expect(hits.map((hit) => hit.url)).toEqual([
      'http://docs.test/algebra.html',
      'http://docs.test/rotations.html',
    ]);
    // The page is represented by its first chunk; summaries are not chunks.
    expect(hits[1]?.chunkId).toBe(ids.get('http://docs.test/rotations.html#0'));
    expect(hits[1]?.text).not.toMatch(/quaternion/i);
  });

  it('adds the summary to the rank of the page’s own matching chunks', async () => {
    // Both pages' chunks say "rotations"; only the Rotations page's summary does too.
    await db.query(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, title) VALUES ('http://docs.test/spin.html', 'http://docs.test/spin.html', 'http://docs.test', 'c1', 0, 'Spin')`,
    );
    await db.query(
      `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count)
       SELECT id, 0, 'spin', '{Rotations}', 'Rotations', 'Rotations in three dimensions compose by multiplication.', 10
         FROM pages WHERE url = 'http://docs.test/spin.html'`,
    );
    try {
      const { hits } = await searchCorpus(db, undefined, { query: 'rotations euler', k: 5 });
      expect(hits[0]?.url).toBe('http://docs.test/rotations.html');
      const { rows } = await db.query<{ ts_config: string }>('SELECT ts_config::text FROM page_summaries');
      expect(rows.map((row) => row.ts_config)).toEqual(['english']);
    } finally {
      await db.query("DELETE FROM pages WHERE url = 'http://docs.test/spin.html'");
    }
  });
});

describe('GET /context', () => {
  it('answers the passages, and 400 for bad parameters', async () => {
    const app = await buildApiServer({
      db,
      temporal: async () => {
        throw new Error('unused');
      },
      search: createSearchService(db),
      logger: pino({ level: 'silent' }),
      docsUi: false,
    });
    try {
      const ok = await app.inject({ url: '/context?q=kalman%20filter&budget=400&perPage=1' });
      expect(ok.statusCode).toBe(200);
      const body = ok.json() as ContextResult;
      expect(body.budgetTokens).toBe(400);
      expect(body.usedTokens).toBeLessThanOrEqual(400);
      expect(body.passages[0]).toMatchObject({ n: 1, url: expect.stringMatching(/^http:\/\/docs\.test\//) });
      expect(body.text.startsWith('[1] ')).toBe(true);
      expect(new Set(body.passages.map((p) => p.url)).size).toBe(body.passages.length);

      for (const [query, message] of [
        ['q=kalman&budget=10', /budget/],
        ['q=kalman&budget=many', /budget/],
        ['q=kalman&perPage=0', /perPage/],
        ['budget=100', /q/],
        ['q=kalman&domain=http%3A%2F%2Fx%2Fy', /domain/],
        ['q=kalman&nonsense=1', /nonsense|additional/],
      ] as const) {
        const bad = await app.inject({ url: `/context?${query}` });
        expect(bad.statusCode, query).toBe(400);
        expect((bad.json() as { message: string }).message, query).toMatch(message);
      }
    } finally {
      await app.close();
    }
  });
});

describe('gleaner context', () => {
  beforeAll(async () => {
    // The CLI opens the store itself; PGlite allows one opener.
    await db.close();
  });

  it('prints numbered passages within the budget', async () => {
    const result = await runGleaner(['context', 'kalman', 'filter', '--budget', '300'], {
      GLEANER_HOME: home,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.startsWith(`[1] `)).toBe(true);
    expect(result.stdout).toContain(KALMAN);
    expect(tokenizer.countTokens(result.stdout)).toBeLessThanOrEqual(300);
    expect(result.stderr).toMatch(/passages?, \d+ of 300 tokens/);
  });

  it('prints one JSON document with --json', async () => {
    const result = await runGleaner(['context', 'kalman filter', '--json', '--per-page', '1'], {
      GLEANER_HOME: home,
    });
    expect(result.code, result.stderr).toBe(0);
    const output = JSON.parse(result.stdout) as ContextResult;
    expect(output.question).toBe('kalman filter');
    expect(output.budgetTokens).toBe(2000);
    expect(output.passages.map((p) => p.n)).toEqual(output.passages.map((_, i) => i + 1));
    expect(new Set(output.passages.map((p) => p.url)).size).toBe(output.passages.length);
  });

  it('exits 2 with a reason for a bad budget', async () => {
    const tooSmall = await runGleaner(['context', 'kalman', '--budget', '10'], { GLEANER_HOME: home });
    expect(tooSmall.code).toBe(2);
    expect(tooSmall.stderr).toMatch(/gleaner: --budget must be a whole number from 50 to 32000, got 10/);
    const notANumber = await runGleaner(['context', 'kalman', '--budget', 'lots'], { GLEANER_HOME: home });
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toMatch(/--budget/);
  });
});
