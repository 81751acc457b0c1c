/**
 * Bad input gets one clear line and a non-zero exit — no stack trace for user errors — and the
 * durable state stays usable: an unreachable seed, a non-HTML seed with only HTML asked for, a
 * malformed URL, an unknown flag or content type, a bad number, a database that is down. A broken
 * PDF is a document that failed, named with its reason, not a failed crawl.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/free-port';
import { addGeneratedPages } from '../../testbed/generated-site';
import { crawlArgs, lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';

let stack: TestStack;
let site: SiteServer;
let env: Record<string, string>;

beforeAll(async () => {
  site = await serveSite(undefined);
  addGeneratedPages(site, 3);
  site.route('/report', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4 not a page');
  });
  stack = await startTestStack();
  env = { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url };
});
afterAll(async () => {
  await stack?.close();
  await site?.close();
});

function expectOneLineError(stderr: string, pattern: RegExp): void {
  expect(lastLine(stderr)).toMatch(pattern);
  expect(stderr).not.toMatch(/^\s+at /m);
}

describe('bad input on the command line', () => {
  it('a malformed URL', async () => {
    const result = await runGleaner(['crawl', 'not a url'], env);
    expect(result.code).toBe(2);
    expectOneLineError(result.stderr, /^gleaner: not a valid http\(s\) URL: not a url$/);
  });

  it('a non-http scheme', async () => {
    const result = await runGleaner(['crawl', 'ftp://127.0.0.1/x'], env);
    expect(result.code).toBe(2);
    expectOneLineError(result.stderr, /not a valid http\(s\) URL/);
  });

  it('an unknown flag', async () => {
    const result = await runGleaner(['crawl', site.url, '--bogus'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown option '--bogus'/);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('a bad flag value with the default log file: one line, no crash from the logger on exit', async () => {
    // No GLEANER_LOG_LEVEL: logs go to a file under GLEANER_HOME, as for a user at a terminal.
    const home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-bad-flag-'));
    try {
      const result = await runGleaner(['crawl', site.url, '--per-origin-concurrency', '0'], {
        ...env,
        GLEANER_HOME: home,
        GLEANER_LOG_LEVEL: undefined,
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--per-origin-concurrency must be at least 1, got 0/);
      expect(result.stderr).not.toMatch(/sonic boom|^\s+at /m);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  // Node 20's recursive mkdir spins for ever where the parent exists but refuses the name with
  // ENOENT, as /proc does: both commands hung, a core busy, before infra/make-folders.ts.
  it('a GLEANER_HOME the system cannot make: one line, exit 2, at once', async () => {
    const result = await runGleaner(
      ['crawl', site.url],
      { GLEANER_HOME: '/proc/gleaner-home', GLEANER_LOG_LEVEL: undefined, TEMPORAL_ADDRESS: undefined },
      30_000,
    );
    expect(result.code).toBe(2);
    expectOneLineError(result.stderr, /^gleaner: cannot create the folder \/proc\/gleaner-home: ENOENT$/);
  });

  it('an export folder the system cannot make: one line, exit 2, at once', async () => {
    const result = await runGleaner(['export', '--out', '/proc/gleaner-export/corpus'], env, 30_000);
    expect(result.code).toBe(2);
    expectOneLineError(result.stderr, /^gleaner: cannot create the folder \/proc\/gleaner-export: ENOENT$/);
  });

  it('a number that is not one', async () => {
    const result = await runGleaner(['crawl', site.url, '--max-pages', 'lots'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--max-pages must be a whole number, got "lots"/);
  });

  it('a negative number names the floor it is under, not "whole number"', async () => {
    const result = await runGleaner(
      ['schedule', 'create', site.url, '--every', '1d', '--max-pages', '-1'],
      env,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--max-pages must be at least 1, got -1/);
  });

  it('an unknown content type', async () => {
    const result = await runGleaner(['crawl', site.url, '--content-types', 'html,epub'], env);
    expect(result.code).toBe(2);
    expectOneLineError(
      result.stderr,
      /^gleaner: --content-types: must be one of html, pdf, markdown, text, docx$/,
    );
    const empty = await runGleaner(['crawl', site.url, '--content-types', ','], env);
    expect(empty.code).toBe(2);
    expectOneLineError(empty.stderr, /^gleaner: --content-types: name at least one content type$/);
  });

  it('an unknown scope', async () => {
    const result = await runGleaner(['crawl', site.url, '--scope', 'everywhere'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Allowed choices are same-origin, same-site, domains/);
  });

  it('an unreachable seed fails the crawl with the reason', async () => {
    const port = await freePort();
    const result = await runGleaner(
      crawlArgs(`http://127.0.0.1:${port}/`, ['--wait', '--no-local-workers']),
      env,
    );
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'failed', pagesFetched: 0, errors: 1 });
    expect(summary.failureReason).toMatch(/ECONNREFUSED/);
    expectOneLineError(result.stderr, /^gleaner: crawl \S+ failed: .*ECONNREFUSED/);
  });

  it('a seed that is not HTML fails the crawl with the content type when only HTML is asked for', async () => {
    const result = await runGleaner(
      crawlArgs(`${site.origin}/report`, ['--content-types', 'html', '--wait', '--no-local-workers']),
      env,
    );
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).failureReason).toMatch(
      /not an HTML page \(content-type application\/pdf\)/,
    );
  });

  it('a PDF seed is a document: a broken one is named with its reason and the crawl completes', async () => {
    const result = await runGleaner(
      crawlArgs(`${site.origin}/report`, ['--wait', '--no-local-workers']),
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({
      status: 'completed',
      pagesFetched: 1,
      pagesIndexed: 0,
      pagesByType: { pdf: 1 },
    });
    expect(summary.failures).toContainEqual(
      expect.objectContaining({ reason: 'pdf-broken', sampleUrls: [`${site.origin}/report`] }),
    );
  });

  it('a loopback seed without --allow-host is refused by the SSRF guard, saying how to allow it', async () => {
    const before = site.log.length;
    const result = await runGleaner(['crawl', site.url, '--wait', '--json', '--no-local-workers'], env);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).failureReason).toMatch(/--allow-host/);
    expect(site.log.length).toBe(before);
  });

  it('a database that is down', async () => {
    const port = await freePort();
    const result = await runGleaner(['crawl', site.url, '--allow-host', '127.0.0.1', '--wait'], {
      ...env,
      DATABASE_URL: `postgres://gleaner:secret@127.0.0.1:${port}/gleaner`,
    });
    expect(result.code).toBe(2);
    expectOneLineError(
      result.stderr,
      /^gleaner: database unavailable at postgres:\/\/gleaner:\*\*\*@127\.0\.0\.1:\d+\/gleaner/,
    );
    expect(result.stderr).not.toContain('secret');
  });

  it('the state is intact afterwards: a good crawl still runs', async () => {
    const result = await runGleaner(crawlArgs(site.url, ['--wait', '--no-local-workers']), env);
    expect(result.code, result.stderr).toBe(0);
    // The three pages, and /report: stored by the PDF test above, so a known page this crawl revisits.
    expect(JSON.parse(result.stdout)).toMatchObject({
      status: 'completed',
      pagesFetched: 4,
      pagesByType: { html: 3, pdf: 1 },
    });
  });
});
