/**
 * The path a new user takes: `gleaner crawl <loopback site> --allow-host 127.0.0.1 --wait` on the
 * embedded default, then `gleaner export --out DIR` with no other flag. The export takes the
 * crawl's allowed hosts, says so in one line, and stores every image of the site (before, every one
 * was refused by the SSRF guard until `--allow-host` was given again).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';

// A 1x1 PNG; each image gets bytes of its own after the signature so none are deduplicated.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const PAGES = ['/', '/tides', '/winds'];
const IMAGES = PAGES.map((_, index) => `/img/chart-${index}.png`);

function prose(topic: string): string {
  return Array.from(
    { length: 6 },
    (_, i) =>
      `<p>The ${topic} notes, part ${i + 1}: harbour pilots read the ${topic} tables each morning before ` +
      'the ferries leave, and every reading is written into the log with the hour and the observer.</p>',
  ).join('\n');
}

let site: SiteServer;
let home: string;

beforeAll(async () => {
  site = await serveSite(undefined);
  PAGES.forEach((page, index) => {
    const topic = page === '/' ? 'harbour' : page.slice(1);
    const links = PAGES.filter((other) => other !== page)
      .map((other) => `<a href="${other}">${other === '/' ? 'home' : other.slice(1)}</a>`)
      .join(' ');
    const html =
      `<!doctype html><html lang="en"><head><title>${topic} log</title></head><body>` +
      `<nav>${links}</nav><main><article><h1>The ${topic} log</h1>` +
      `<p><img src="${IMAGES[index]}" alt="${topic} chart" width="600" height="400"></p>${prose(topic)}` +
      '</article></main></body></html>';
    site.route(page, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
  });
  IMAGES.forEach((image, index) => {
    site.route(image, (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.concat([PNG, Buffer.alloc(64, index)]));
    });
  });
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-export-hosts-'));
});
afterAll(async () => {
  await site?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('gleaner export after a loopback crawl', () => {
  it('writes the images with no extra flag, taking the crawl’s allowed hosts and naming them', async () => {
    const env = { GLEANER_HOME: home };
    const crawl = await runGleaner(
      ['crawl', site.url, '--allow-host', '127.0.0.1', '--delay-ms', '0', '--wait', '--json'],
      env,
    );
    expect(crawl.code, crawl.stderr).toBe(0);
    expect(JSON.parse(crawl.stdout)).toMatchObject({ status: 'completed', pagesIndexed: PAGES.length });

    const out = path.join(home, 'export');
    const result = await runGleaner(['export', '--out', out, '--asset-delay-ms', '0', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({
      pages: PAGES.length,
      assets: { linked: IMAGES.length, fetched: IMAGES.length, refused: 0, broken: 0 },
    });
    expect(summary.allowHostsFromCrawls).toEqual(['127.0.0.1']);
    expect(result.stderr).toMatch(/^export: images may also come from 127\.0\.0\.1 \(allowed by .*crawls/m);

    // Each page's Markdown points at its stored image, and the stored bytes are the served ones.
    const hostDir = readdirSync(out).find((name) => name.startsWith('127.0.0.1'));
    expect(hostDir).toBeDefined();
    const assetsDir = path.join(out, hostDir ?? '', '_assets');
    const stored = readdirSync(assetsDir).filter((name) => name.endsWith('.png'));
    expect(stored).toHaveLength(IMAGES.length);
    const index = readFileSync(path.join(out, hostDir ?? '', 'index.md'), 'utf8');
    expect(index).toMatch(/!\[harbour chart\]\(_assets\/[0-9a-f]+\.png\)/);
    for (const image of IMAGES) {
      expect(site.log.filter((entry) => entry.path === image)).toHaveLength(1);
    }
    const report = JSON.parse(readFileSync(path.join(out, 'export-report.json'), 'utf8'));
    expect(report.assets.refused).toEqual([]);
    expect(existsSync(path.join(out, 'llms.txt'))).toBe(true);
  }, 600_000);
});
