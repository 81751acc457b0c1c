/**
 * `gleaner robots` as users run it: a child process, a robots file on disk, and real loopback servers
 * answering robots.txt with 200, 404 and 503. Traffic goes to 127.0.0.1 only.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RobotsReport } from '../../cli/robots-command';
import { DEFAULT_USER_AGENT } from '../../domain/crawl-spec';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';

const ROBOTS = [
  '\uFEFFUser-agent: *',
  'Disallow: /private/',
  'Crawl-delay: 2',
  '',
  'User-agent: gleaner',
  'Allow: /private/open',
  'Disallow: /private/',
  'Disallow: /*.pdf$',
  'Crawl-delay: 0.5',
  '',
  'Sitemap: https://example.com/sitemap.xml',
].join('\r\n');

let dir: string;
let robotsFile: string;
let ok: SiteServer;
let missing: SiteServer;
let failing: SiteServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gleaner-robots-'));
  robotsFile = path.join(dir, 'robots.txt');
  writeFileSync(robotsFile, ROBOTS);
  ok = await serveSite(undefined);
  ok.route('/robots.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(ROBOTS);
  });
  missing = await serveSite(undefined); // every path, robots.txt included, is a 404
  failing = await serveSite(undefined);
  failing.route('/robots.txt', (_req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
  });
});

afterAll(async () => {
  await Promise.all([ok?.close(), missing?.close(), failing?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function jsonLines(stdout: string): RobotsReport[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as RobotsReport);
}

function robotsRequests(site: SiteServer): number {
  return site.log.filter((entry) => entry.path === '/robots.txt').length;
}

describe('gleaner robots --robots-file (no network)', () => {
  it('answers several URLs, one JSON line each, and touches no server', async () => {
    const urls = ['/private/x', '/private/open/page', '/report.pdf', '/'].map((p) => `${ok.origin}${p}`);
    const before = ok.log.length;
    const result = await runGleaner(['robots', ...urls, '--robots-file', robotsFile, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(ok.log.length).toBe(before);

    const reports = jsonLines(result.stdout);
    expect(reports.map((r) => [r.url, r.allowed])).toEqual([
      [urls[0], false],
      [urls[1], true],
      [urls[2], false],
      [urls[3], true],
    ]);
    expect(reports[0]).toEqual({
      url: urls[0],
      allowed: false,
      rule: { directive: 'disallow', path: '/private/', line: 7 },
      group: 'gleaner',
      userAgent: DEFAULT_USER_AGENT,
      crawlDelaySeconds: 0.5,
      sitemaps: ['https://example.com/sitemap.xml'],
      source: 'file',
    });
    expect(reports[2]?.rule).toEqual({ directive: 'disallow', path: '/*.pdf$', line: 8 });
    expect(reports[3]?.rule).toBeUndefined();
  });

  it('--user-agent picks the group by its product token', async () => {
    const url = 'https://example.com/private/open/page';
    const result = await runGleaner([
      'robots',
      url,
      '--robots-file',
      robotsFile,
      '--json',
      '--user-agent',
      'OtherBot/2.0',
    ]);
    expect(result.code).toBe(0);
    expect(jsonLines(result.stdout)).toEqual([
      expect.objectContaining({
        allowed: false,
        group: '*',
        userAgent: 'OtherBot/2.0',
        crawlDelaySeconds: 2,
        rule: { directive: 'disallow', path: '/private/', line: 2 },
      }),
    ]);
  });

  it('prints a readable report without --json', async () => {
    const result = await runGleaner(['robots', 'https://example.com/private/x', '--robots-file', robotsFile]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('DISALLOWED  https://example.com/private/x');
    expect(result.stdout).toMatch(/rule\s+disallow \/private\/ \(line 7\)/);
    expect(result.stdout).toMatch(/crawl-delay\s+0\.5 s/);
    expect(result.stdout).toMatch(/sitemaps\s+https:\/\/example\.com\/sitemap\.xml/);
  });

  it('an invalid URL is one line and exit 2', async () => {
    const result = await runGleaner([
      'robots',
      'https://example.com/',
      'not a url',
      '--robots-file',
      robotsFile,
    ]);
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toBe('gleaner: not a valid http(s) URL: not a url');
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.stdout).toBe('');
  });

  it('a path alone is refused with the whole URL to give instead', async () => {
    const result = await runGleaner(['robots', '--robots-file', robotsFile, '/b?q=1']);
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toBe(
      'gleaner: not a valid http(s) URL: /b?q=1 (give the whole URL, like https://example.com/b?q=1)',
    );
  });

  it('an unreadable robots file is one line and exit 2', async () => {
    const result = await runGleaner([
      'robots',
      'https://example.com/',
      '--robots-file',
      path.join(dir, 'nope.txt'),
    ]);
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toMatch(/^gleaner: cannot read --robots-file .*nope\.txt: ENOENT$/);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('gleaner robots fetching <origin>/robots.txt (RFC 9309 §2.3.1)', () => {
  it('2xx: fetches robots.txt once per origin and parses it', async () => {
    const before = robotsRequests(ok);
    const urls = [`${ok.origin}/private/x`, `${ok.origin}/private/open/1`, `${ok.origin}/`];
    const result = await runGleaner(['robots', ...urls, '--json', '--allow-host', '127.0.0.1']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(robotsRequests(ok) - before).toBe(1);
    expect(ok.log.at(-1)?.userAgent).toBe(DEFAULT_USER_AGENT);

    const reports = jsonLines(result.stdout);
    expect(reports.map((r) => r.allowed)).toEqual([false, true, true]);
    expect(reports[0]).toMatchObject({
      source: 'fetched',
      status: 200,
      robotsUrl: `${ok.origin}/robots.txt`,
      group: 'gleaner',
      crawlDelaySeconds: 0.5,
      sitemaps: ['https://example.com/sitemap.xml'],
    });
  });

  it('an oversized robots.txt: its first 500 KiB are parsed (RFC 9309 §2.5), the origin is not refused', async () => {
    const big = await serveSite(undefined);
    try {
      const padding = `# ${'x'.repeat(98)}\n`.repeat((3 * 1024 * 1024) / 100);
      const body = `User-agent: *\nDisallow: /private/\n${padding}Disallow: /late/\n`;
      big.route('/robots.txt', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
      });
      const urls = [`${big.origin}/private/x`, `${big.origin}/late/x`, `${big.origin}/public`];
      const result = await runGleaner(['robots', ...urls, '--json', '--allow-host', '127.0.0.1']);
      expect(result.code, result.stderr).toBe(0);
      const reports = jsonLines(result.stdout);
      expect(reports.map((r) => r.allowed)).toEqual([false, true, true]);
      expect(reports[0]).toMatchObject({ source: 'fetched', status: 200 });
    } finally {
      await big.close();
    }
  });

  it('a robots.txt sent without a Content-Type is read as the crawler reads it: its rules hold', async () => {
    const untyped = await serveSite(undefined);
    try {
      untyped.route('/robots.txt', (_req, res) => {
        res.writeHead(200).end(ROBOTS);
      });
      const urls = [`${untyped.origin}/private/x`, `${untyped.origin}/public`];
      const result = await runGleaner(['robots', ...urls, '--json', '--allow-host', '127.0.0.1']);
      expect(result.code, result.stderr).toBe(0);
      const reports = jsonLines(result.stdout);
      expect(reports.map((r) => r.allowed)).toEqual([false, true]);
      expect(reports[0]).toMatchObject({ source: 'fetched', status: 200, crawlDelaySeconds: 0.5 });
    } finally {
      await untyped.close();
    }
  });

  it('4xx: robots.txt unavailable, everything allowed', async () => {
    const result = await runGleaner([
      'robots',
      `${missing.origin}/anything`,
      '--json',
      '--allow-host',
      '127.0.0.1',
    ]);
    expect(result.code).toBe(0);
    expect(jsonLines(result.stdout)).toEqual([
      expect.objectContaining({ allowed: true, source: 'status-404-allow-all', status: 404, sitemaps: [] }),
    ]);
    expect(robotsRequests(missing)).toBe(1);
  });

  it('5xx: robots.txt unreachable, everything disallowed, and still exit 0', async () => {
    const result = await runGleaner([
      'robots',
      `${failing.origin}/page`,
      '--json',
      '--allow-host',
      '127.0.0.1',
    ]);
    expect(result.code).toBe(0);
    expect(jsonLines(result.stdout)).toEqual([
      expect.objectContaining({
        allowed: false,
        source: 'unreachable-disallow-all',
        status: 503,
        rule: { directive: 'disallow', path: '/', line: 0 },
      }),
    ]);
  });

  it('mixes origins in one run, each with its own outcome, in a readable report', async () => {
    const result = await runGleaner([
      'robots',
      `${ok.origin}/private/x`,
      `${missing.origin}/x`,
      `${failing.origin}/x`,
      '--allow-host',
      '127.0.0.1',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`DISALLOWED  ${ok.origin}/private/x`);
    expect(result.stdout).toContain(`allowed  ${missing.origin}/x`);
    expect(result.stdout).toContain('answered HTTP 404: everything allowed');
    expect(result.stdout).toContain(`DISALLOWED  ${failing.origin}/x`);
    expect(result.stdout).toContain('unreachable (HTTP 503): everything disallowed');
    // The stand-in rule of an unreadable robots.txt is no line of a file.
    expect(result.stdout).toMatch(/rule\s+disallow \/ \(no robots\.txt could be read: see below\)/);
    expect(result.stdout).not.toContain('(line 0)');
  });

  it('without --allow-host the SSRF guard refuses loopback: unreachable, disallowed', async () => {
    const before = ok.log.length;
    const result = await runGleaner(['robots', `${ok.origin}/`, '--json']);
    expect(result.code).toBe(0);
    const [report] = jsonLines(result.stdout);
    expect(report).toMatchObject({ allowed: false, source: 'unreachable-disallow-all' });
    expect(report?.reason).toMatch(/SSRF guard/);
    expect(ok.log.length).toBe(before);
  });
});
