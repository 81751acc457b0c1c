/**
 * `gleaner search` end to end: the real command as a child process against an embedded (PGlite)
 * store in a temporary GLEANER_HOME, filled beforehand by this test with the hand-made corpus.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { toVectorSql } from '../../db/vector';
import { loadDefaultEmbedder } from '../../embed/embedder';
import type { SearchHit } from '../../search/hybrid-search';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { loadCorpus } from './search-corpus';

// Each run of the CLI starts a fresh Node process; on a busy two-core machine that takes a while.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

interface JsonOutput {
  query: string;
  mode: string;
  notes: string[];
  hits: SearchHit[];
}

const homes: string[] = [];
function tempHome(): string {
  const home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-search-cli-'));
  homes.push(home);
  return home;
}

/** A store under `home` holding the test corpus; with `embed`, vectors from the real model. */
async function fillStore(home: string, options: { embed: boolean; empty?: boolean }): Promise<void> {
  const db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
  try {
    await migrate(db);
    if (options.empty) return;
    await loadCorpus(db, { recordModel: false });
    // The corpus's synthetic vectors mean nothing to a real model: clear them, then embed for real
    // or leave the corpus unembedded.
    await db.query('UPDATE chunks SET embedding = NULL, embedding_model = NULL');
    if (options.embed) {
      const embedder = await loadDefaultEmbedder();
      const { rows } = await db.query<{ id: number; text: string }>(
        "SELECT id, heading_text || E'\\n' || content AS text FROM chunks ORDER BY id",
      );
      const vectors = await embedder.embed(rows.map((row) => row.text));
      for (const [i, row] of rows.entries()) {
        await db.query('UPDATE chunks SET embedding = $2::vector, embedding_model = $3 WHERE id = $1', [
          row.id,
          toVectorSql(vectors[i] as Float32Array),
          embedder.identity.name,
        ]);
      }
      await db.query('INSERT INTO embedding_model (name, dimension, weights_sha256) VALUES ($1, $2, $3)', [
        embedder.identity.name,
        embedder.identity.dimension,
        embedder.identity.weightsSha256,
      ]);
    }
  } finally {
    await db.close();
  }
}

afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

describe('gleaner search on an unembedded store', () => {
  let home: string;
  beforeAll(async () => {
    home = tempHome();
    await fillStore(home, { embed: false });
  });

  it('falls back to full-text search, says so, and prints a readable list', async () => {
    const result = await runGleaner(['search', 'gradient', 'descent', '--k', '3'], { GLEANER_HOME: home });
    expect(result.stderr).toMatch(/searched by words only: the corpus has no embeddings yet/);
    expect(result.code).toBe(0);
    const first = result.stdout.split('\n\n')[0] ?? '';
    expect(first).toMatch(/^ 1\. 0\.0164 {2}Gradient notes {2}\[text #1\]/);
    expect(first).toContain('http://blog.other.org/posts/gradient.html');
    expect(first).toContain('Gradient descent takes small steps downhill.');
    expect(result.stdout).not.toMatch(/^ 4\./m);
  });

  it('prints one JSON document with --json, filters applied', async () => {
    const result = await runGleaner(
      ['search', 'gradient', '--json', '--domain', 'docs.example.com', '--prefix', '/guide/', '--k', '5'],
      { GLEANER_HOME: home },
    );
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as JsonOutput;
    expect(output.mode).toBe('fulltext');
    expect(output.notes[0]).toMatch(/no embeddings yet/);
    expect(output.hits.map((hit) => hit.url).sort()).toEqual([
      'http://docs.example.com/guide/unembedded.html',
      'http://sub.docs.example.com/guide/gradient.html',
    ]);
    for (const hit of output.hits) {
      expect(hit).toMatchObject({ retrievers: ['fulltext'], headingPath: expect.any(Array) });
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.text).toMatch(/gradient/i);
    }
  });

  it('says when nothing matches', async () => {
    const result = await runGleaner(['search', 'zeppelin'], { GLEANER_HOME: home });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/No results for "zeppelin"/);
  });

  it('refuses vector mode without embeddings, and bad flags, with exit status 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--mode', 'vector'], /vector search is not possible: the corpus has no embeddings yet/],
      [['--k', '0'], /--k must be at least 1/],
      [['--k', '101'], /gleaner: --k must be a whole number from 1 to 100/],
      // The flag's name, not the search parameter's (`pathPrefix`).
      [
        ['--prefix', 'docs'],
        /gleaner: --prefix must start with "\/" \(a path\) or http\(s\):\/\/ \(a URL\), got "docs"/,
      ],
      [['--mode', 'semantic'], /Allowed choices are hybrid, vector, fulltext/],
      [['--domain', 'not a host'], /is not a host name/],
      // A mistyped crawl id used to look like "no results".
      [['--crawl', 'nope'], /gleaner: --crawl: no crawl "nope" in the store/],
    ];
    for (const [flags, message] of cases) {
      const result = await runGleaner(['search', 'gradient', ...flags], { GLEANER_HOME: home });
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr, flags.join(' ')).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    const missing = await runGleaner(['search'], { GLEANER_HOME: home });
    expect(missing.code).toBe(2);
  }, 600_000);
});

describe('gleaner search with no corpus', () => {
  it('explains an empty store and a missing one', async () => {
    const empty = tempHome();
    await fillStore(empty, { embed: false, empty: true });
    const result = await runGleaner(['search', 'gradient'], { GLEANER_HOME: empty });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/The corpus is empty/);
    const json = await runGleaner(['search', 'gradient', '--json'], { GLEANER_HOME: empty });
    expect(JSON.parse(json.stdout)).toMatchObject({ hits: [], notes: ['the corpus is empty'] });

    const none = await runGleaner(['search', 'gradient'], { GLEANER_HOME: tempHome() });
    expect(none.code).toBe(2);
    expect(lastLine(none.stderr)).toMatch(/no corpus in .* yet/);
  });
});

describe('gleaner search with the real embedding model', () => {
  let home: string;
  beforeAll(async () => {
    home = tempHome();
    await fillStore(home, { embed: true });
  });

  it('finds by meaning what shares no word with the query', async () => {
    // No chunk says "building" or "city"; the German one is about houses in a town.
    const vector = await runGleaner(
      ['search', 'buildings in a city', '--mode', 'vector', '--json', '--k', '1'],
      {
        GLEANER_HOME: home,
      },
    );
    expect(vector.code).toBe(0);
    const output = JSON.parse(vector.stdout) as JsonOutput;
    expect(output.mode).toBe('vector');
    expect(output.hits[0]?.url).toBe('http://de.example.net/haus.html');
    expect(output.hits[0]?.retrievers).toEqual(['vector']);
  });

  it('fuses both retrievers in hybrid mode', async () => {
    const result = await runGleaner(['search', 'bayesian optimization surrogate model', '--json'], {
      GLEANER_HOME: home,
    });
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as JsonOutput;
    expect(output.mode).toBe('hybrid');
    expect(output.notes).toEqual([]);
    expect(output.hits[0]?.url).toBe('http://docs.example.com/guide/bayes.html');
    expect(output.hits[0]?.retrievers).toEqual(['vector', 'fulltext']);
  });
});
