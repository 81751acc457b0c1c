/**
 * `gleaner export` and `gleaner report` refuse bad flags with one line and exit 2, touching no store;
 * so are an --out that cannot be a folder and a --crawl or --origin the store does not know, while a
 * crawl the store knows with no page to export runs, writes no page and says why. An export of pages a file system cannot take as they are still exits 0 with every page written,
 * one page that cannot be written is reported and the rest written, and only an export that could
 * write no page at all exits 1.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';

const home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-export-cli-'));
const env = { GLEANER_HOME: home };

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('gleaner export: bad input', () => {
  it('needs --out', async () => {
    const result = await runGleaner(['export'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--out <dir>/);
  });

  it('takes --crawl or --origin, not both, and an origin must be a URL', async () => {
    const both = await runGleaner(
      ['export', '--out', home, '--crawl', 'a', '--origin', 'https://x.org'],
      env,
    );
    expect(both.code).toBe(2);
    expect(lastLine(both.stderr)).toBe('gleaner: give --crawl or --origin, not both');
    const bad = await runGleaner(['export', '--out', home, '--origin', 'not a url'], env);
    expect(bad.code).toBe(2);
    expect(lastLine(bad.stderr)).toMatch(/--origin must be a URL/);
    const delay = await runGleaner(['export', '--out', home, '--asset-delay-ms', '-1'], env);
    expect(delay.code).toBe(2);
  });

  it('says plainly when there is no corpus yet', async () => {
    const result = await runGleaner(['export', '--out', path.join(home, 'out')], env);
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toMatch(/no corpus in .* yet/);
    const report = await runGleaner(['report'], env);
    expect(report.code).toBe(2);
    expect(lastLine(report.stderr)).toMatch(/no corpus in .* yet/);
  });
});

describe('gleaner export of pages written by strangers', () => {
  const storeHome = path.join(home, 'store');
  const storeEnv = { GLEANER_HOME: storeHome };
  const cjk = 'ページ'.repeat(34); // 102 characters, 306 bytes
  const origin = 'https://docs.test';
  const urls = [
    `${origin}/`,
    `${origin}/${encodeURIComponent(cjk)}`,
    `${origin}/a`,
    `${origin}/a.md/x`,
    `${origin}/docs/p`,
  ];

  beforeAll(async () => {
    const db = await PgliteDatabase.open({ dataDir: path.join(storeHome, 'pgdata'), socket: false });
    try {
      await migrate(db);
      // `recrawl` stored no page: every page answered it 304 Not Modified, say, and stays with `c`.
      await db.query(
        `INSERT INTO crawls (id, spec, started_at) VALUES ('c', '{}', now() - interval '1 day'), ('recrawl', '{}', now())`,
      );
      for (const url of urls) {
        const { rows } = await db.query<{ id: number }>(
          `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_hash, title, markdown, metadata,
                              language, extracted_hash, extracted_at, fetched_at)
           VALUES ($1, $1, $2, 'c', 0, 200, 'h-' || $1, $3, $4, '{}', 'en', 'h-' || $1, now(), now()) RETURNING id`,
          [url, origin, `Page ${url.length}`, `# Page\n\nSee [home](${origin}/) and [a](${origin}/a).`],
        );
        await db.query(
          `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by, summary, tags)
           VALUES ($1, 'h-' || $2, 'llm:m', 'llm:m', $3, ARRAY['t'])`,
          [rows[0]?.id ?? null, url, 'Summary.\n# Injected\n[x](javascript:alert(1))'],
        );
      }
      // A page that became an exact copy of the home page keeps the Markdown of what it said before:
      // not exported (before, its old text went out as if the site still served it).
      await db.query(
        `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_hash, title, markdown, metadata,
                            language, extracted_hash, extracted_at, fetched_at, duplicate_kind, duplicate_of)
         SELECT $1, $1, $2, 'c', 1, 200, p.content_hash, 'Copy', '# Old text the site no longer serves', '{}',
                'en', 'h-old', now(), now(), 'exact', p.id
           FROM pages p WHERE p.url = $3`,
        [`${origin}/copy`, origin, `${origin}/`],
      );
    } finally {
      await db.close();
    }
  });

  it('exits 0 and writes every page, whatever their names', async () => {
    const out = path.join(home, 'out');
    const result = await runGleaner(['export', '--out', out, '--no-assets', '--json'], storeEnv);
    expect(result.stderr).not.toMatch(/ENAMETOOLONG|ENOTDIR|EEXIST/);
    expect(result.code).toBe(0);
    const summary = JSON.parse(lastLine(result.stdout));
    expect(summary).toMatchObject({ pages: urls.length, failures: 0 });
    expect(JSON.parse(readFileSync(path.join(out, 'export-report.json'), 'utf8')).failures).toEqual([]);
    const written = readdirSync(path.join(out, 'docs.test'));
    expect(written.some((name) => name.startsWith('ページ') && Buffer.byteLength(name) <= 255)).toBe(true);
    expect(written.some((name) => /^a--[0-9a-f]{10}\.md$/.test(name))).toBe(true);
    expect(existsSync(path.join(out, 'docs.test', 'a.md', 'x.md'))).toBe(true);
    expect(written.some((name) => name.startsWith('copy'))).toBe(false);
    const llms = readFileSync(path.join(out, 'llms.txt'), 'utf8');
    expect(llms).not.toContain('/copy');
    expect(llms).not.toMatch(/^# Injected/m);
    expect(llms).not.toMatch(/(^|[^\\])\]\(javascript:/m);
  });

  it('reports a page it may not write, writes the rest and exits 0', async () => {
    const out = path.join(home, 'out');
    const outside = path.join(home, 'outside');
    mkdirSync(outside, { recursive: true });
    rmSync(path.join(out, 'docs.test', 'docs'), { recursive: true, force: true });
    symlinkSync(outside, path.join(out, 'docs.test', 'docs'));
    const result = await runGleaner(['export', '--out', out, '--no-assets'], storeEnv);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`1 page(s) or file(s) could not be written`);
    expect(result.stderr).toContain(path.join(out, 'export-report.json'));
    expect(readdirSync(outside)).toEqual([]);
    const report = JSON.parse(readFileSync(path.join(out, 'export-report.json'), 'utf8'));
    expect(report.failures).toEqual([expect.objectContaining({ url: `${origin}/docs/p` })]);
    expect(result.stdout).toMatch(/Exported 4 pages/);
  });

  it('exits 1 when no page could be written', async () => {
    const out = path.join(home, 'out-none');
    const outside = path.join(home, 'outside-none');
    mkdirSync(outside, { recursive: true });
    mkdirSync(out, { recursive: true });
    symlinkSync(outside, path.join(out, 'docs.test'));
    const result = await runGleaner(['export', '--out', out, '--no-assets', '--json'], storeEnv);
    expect(result.code).toBe(1);
    expect(lastLine(result.stderr)).toMatch(/no page could be written/);
    expect(JSON.parse(lastLine(result.stdout))).toMatchObject({ pages: 0, failures: urls.length });
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses an --out that is a file, or lies under one, naming it', async () => {
    const file = path.join(home, 'a-file');
    writeFileSync(file, 'not a folder');
    const result = await runGleaner(['export', '--out', file, '--no-assets'], storeEnv);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(lastLine(result.stderr)).toBe(`gleaner: --out ${file} is a file, not a folder`);
    const below = await runGleaner(['export', '--out', path.join(file, 'x'), '--no-assets'], storeEnv);
    expect(below.code).toBe(2);
    expect(lastLine(below.stderr)).toBe(
      `gleaner: --out ${path.join(file, 'x')}: ${file} is a file, not a folder`,
    );
  });

  it('refuses a --crawl or --origin the store does not know, naming it and the latest crawls', async () => {
    const out = path.join(home, 'out-unknown');
    const crawl = await runGleaner(['export', '--out', out, '--crawl', 'nope', '--no-assets'], storeEnv);
    expect(crawl.code).toBe(2);
    expect(crawl.stderr).not.toMatch(/^\s+at /m);
    expect(lastLine(crawl.stderr)).toBe('gleaner: no crawl "nope" in the store; latest crawls: recrawl, c');
    const other = await runGleaner(
      ['export', '--out', out, '--origin', 'http://127.0.0.1:9999', '--no-assets'],
      storeEnv,
    );
    expect(other.code).toBe(2);
    expect(lastLine(other.stderr)).toMatch(
      /^gleaner: no page of origin http:\/\/127\.0\.0\.1:9999 in the store/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('exports a crawl the store knows but whose pages another crawl stored last: no page, a note, exit 0', async () => {
    const out = path.join(home, 'out-recrawl');
    const result = await runGleaner(
      ['export', '--out', out, '--crawl', 'recrawl', '--no-assets', '--json'],
      storeEnv,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(lastLine(result.stdout))).toMatchObject({ pages: 0, failures: 0 });
    expect(result.stderr).toMatch(/crawl recrawl is in the store but no page to export carries it/);
    const byOrigin = await runGleaner(
      ['export', '--out', path.join(home, 'out-origin'), '--origin', origin, '--no-assets', '--json'],
      storeEnv,
    );
    expect(byOrigin.code, byOrigin.stderr).toBe(0);
    expect(JSON.parse(lastLine(byOrigin.stdout))).toMatchObject({ pages: urls.length });
  });
});
