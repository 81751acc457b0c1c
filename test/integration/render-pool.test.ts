/**
 * The render pool on real Chromium against a loopback server: pages render, the pool recycles its
 * browser, and no browser process outlives the pool — not after many pages and recycles, not after the
 * process hosting it is killed mid-render (SIGKILL: no finally, no exit hook runs).
 *
 * Every page costs a fresh context, and so a fresh sandboxed renderer process (~0.5 s of CPU on
 * these machines, 0.84 s of wall time a page in CI with three lanes): the test proves recycling with
 * 50 pages and a browser every 10 (five launches, as the 500-page run had). The full run is
 * `RENDER_POOL_PAGES=500 npx vitest run test/integration/render-pool.test.ts` (a browser every 100).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserNetwork } from '../../activities/render/browser-network';
import { BrowserPool } from '../../activities/render/browser-pool';
import { renderPage } from '../../activities/render/render-page';
import { repoRoot } from '../../infra/tools-dir';
import { processesInGroups, waitForNoProcesses } from '../../testbed/process-groups';
import { type SiteServer, serveSite } from '../../testbed/site-server';

let site: SiteServer;

/** Five browsers whatever the page count: each recycle is a retirement while other lanes render. */
const BROWSERS = 5;
const PAGES = Number(process.env.RENDER_POOL_PAGES ?? 50);
if (!Number.isInteger(PAGES) || PAGES < BROWSERS || PAGES % BROWSERS !== 0)
  throw new Error(
    `RENDER_POOL_PAGES must be a multiple of ${BROWSERS}, got ${process.env.RENDER_POOL_PAGES}`,
  );
const PAGES_PER_BROWSER = PAGES / BROWSERS;

// Every request through the guarded, pinned client; robots.txt rules are not what this file tests.
const network = () =>
  createBrowserNetwork({
    userAgent: 'gleaner-test',
    allowHosts: ['127.0.0.1'],
    robots: { check: async () => ({ allowed: true }) },
    maxBodyBytes: 1024 * 1024,
  });

beforeAll(async () => {
  site = await serveSite(undefined);
  site.route('/page', (req, res) => {
    const n = new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '0';
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<div id="root"></div><script>document.getElementById('root').textContent = 'rendered page ' + ${JSON.stringify(n)};</script>`,
      );
  });
  // A page whose script waits on a request the server never answers: it never settles.
  site.route('/hang', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>waiting</p><script>fetch('/never')</script>`);
  });
  site.route('/never', () => {});
});

afterAll(async () => {
  await site?.close();
});

describe('BrowserPool', () => {
  it(`renders ${PAGES} pages with browsers recycled every ${PAGES_PER_BROWSER}, and leaves no browser process behind`, {
    timeout: 900_000,
  }, async () => {
    const pool = new BrowserPool({ maxPages: 3, pagesPerBrowser: PAGES_PER_BROWSER });
    const seen: string[] = [];
    let next = 0;
    let peakGroupProcesses = 0;
    let singletonInOwnTemp = false;
    const lane = async () => {
      while (next < PAGES) {
        const n = next++;
        const page = await renderPage(pool, `${site.origin}/page?n=${n}`, {
          userAgent: 'gleaner-test',
          network: network(),
          settleMs: 2_000,
        });
        if (page.html.includes(`rendered page ${n}`)) seen.push(String(n));
        if (n % 10 === 0) {
          peakGroupProcesses = Math.max(peakGroupProcesses, processesInGroups(pool.launchedGroups).length);
          singletonInOwnTemp ||= ownTempHoldsSingleton(pool);
        }
      }
    };
    try {
      await Promise.all([lane(), lane(), lane()]);
    } finally {
      await pool.close();
    }
    expect(seen).toHaveLength(PAGES);
    expect(pool.launchedGroups).toHaveLength(BROWSERS);
    expect(peakGroupProcesses).toBeGreaterThan(0);
    expect(await waitForNoProcesses(pool.launchedGroups, 10_000)).toEqual([]);
    // Chromium's singleton folder was in the browser's own temp folder, and no browser left a folder.
    expect(singletonInOwnTemp).toBe(true);
    expect(pool.launchedFolders).toHaveLength(BROWSERS);
    expect(pool.launchedFolders.flat().filter(existsSync)).toEqual([]);
  });

  it('a hung page hits its deadline, the browser is killed, and the next page gets a fresh browser', async () => {
    const pool = new BrowserPool({ maxPages: 1 });
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    const listenersBefore = signals.map((signal) => process.listenerCount(signal));
    try {
      const started = Date.now();
      // The settle wait is bounded: a page that never goes quiet is read as it is.
      const page = await renderPage(pool, `${site.origin}/hang`, {
        userAgent: 'gleaner-test',
        network: network(),
        settleMs: 1_500,
      });
      expect(page.html).toContain('waiting');
      expect(Date.now() - started).toBeLessThan(15_000);
      // A call that overruns its hard deadline kills the browser; the pool launches another.
      await expect(
        pool.withPage({ userAgent: 'gleaner-test' }, async (_page, deadline) =>
          deadline(new Promise(() => {}), 'stuck call', 1_000),
        ),
      ).rejects.toThrow(/took longer than 1000 ms; browser killed/);
      const again = await renderPage(pool, `${site.origin}/page?n=7`, {
        userAgent: 'gleaner-test',
        network: network(),
      });
      expect(again.html).toContain('rendered page 7');
      expect(pool.launchedGroups).toHaveLength(2);
      // Playwright adds no signal handler of its own: its handler exited the process on Ctrl-C before
      // gleaner's shutdown could say how to resume and release the store's lock.
      expect(signals.map((signal) => process.listenerCount(signal))).toEqual(listenersBefore);
      expect(processesInGroups(pool.launchedGroups.slice(0, 1))).toEqual([]);
    } finally {
      await pool.close();
    }
    expect(await waitForNoProcesses(pool.launchedGroups, 10_000)).toEqual([]);
    // The killed browser's folders went with it, as the closed one's did.
    expect(pool.launchedFolders.map((folders) => folders.length)).toEqual([3, 3]);
    expect(pool.launchedFolders.flat().filter(existsSync)).toEqual([]);
  });

  it('a process killed mid-render leaves no browser process running', async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot(), 'test/fixtures/render-pool-child.ts'), `${site.origin}/hang`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const { group, folders } = await new Promise<{ group: number; folders: string[] }>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (chunk) => {
        out += chunk;
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { group: number; folders: string[] });
      });
      child.on('exit', (code) => reject(new Error(`child exited early with ${code}`)));
    });
    // Mid-render: the page has asked for the request that never answers.
    const deadline = Date.now() + 30_000;
    while (!site.log.some((entry) => entry.path === '/never') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(site.log.some((entry) => entry.path === '/never')).toBe(true);
    expect(processesInGroups([group]).length).toBeGreaterThan(1);
    expect(folders).toHaveLength(3);
    expect(folders.filter(existsSync)).toEqual(folders);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(await waitForNoProcesses([group], 10_000)).toEqual([]);
    // No finally ran in the killed process: the watchdog removed the profile and temp folders.
    expect(folders.filter(existsSync)).toEqual([]);
  });
});

function ownTempHoldsSingleton(pool: BrowserPool): boolean {
  const temp = pool.launchedFolders.at(-1)?.[0];
  try {
    return temp !== undefined && readdirSync(temp).some((name) => name.startsWith('org.chromium.Chromium.'));
  } catch {
    return false; // that browser was retired and its folder removed meanwhile
  }
}
