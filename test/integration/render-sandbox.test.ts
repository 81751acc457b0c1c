/**
 * Least privilege for the browser, on real Chromium, read from the kernel's own records (/proc):
 * its sandbox is on (renderers under seccomp-bpf in a user namespace of their own, no --no-sandbox
 * anywhere), it runs as the unprivileged browser user when this process is root, and none of
 * gleaner's secrets reaches the browser or any renderer. A page's popups, new windows and shared
 * workers get nothing: their requests are refused by the interception on the browser context, and
 * the servers' own logs show they never arrived. Traffic goes to 127.0.0.0/8 only.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BrowserUnavailableError,
  DEFAULT_BROWSER_USER,
  lookupUser,
} from '../../activities/render/browser-launch';
import { createBrowserNetwork } from '../../activities/render/browser-network';
import { BrowserPool } from '../../activities/render/browser-pool';
import { renderPage } from '../../activities/render/render-page';
import { repoRoot } from '../../infra/tools-dir';
import { type BrowserProcess, browserProcesses, memoryContains } from '../../testbed/browser-processes';
import { waitForNoProcesses } from '../../testbed/process-groups';
import { type SiteServer, serveSite } from '../../testbed/site-server';

const UA = 'gleaner-test/1.0';
const isRoot = process.getuid?.() === 0;

/** What the worker process holds and the browser must never see. */
const SECRETS: Record<string, string> = {
  GLEANER_LLM_API_KEY: 'llmkeysecretvalue',
  DATABASE_URL: 'postgres://gleaner:dbpasswordsecretvalue@127.0.0.1:5432/gleaner',
  GLEANER_API_TOKEN: 'apitokensecretvalue',
  TEMPORAL_ADDRESS: '127.0.0.1:7233',
};
const savedEnv: Record<string, string | undefined> = {};

let site: SiteServer;
let outsider: SiteServer;
let pool: BrowserPool;

const html = (body: string) => (_req: http.IncomingMessage, res: http.ServerResponse) =>
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);

beforeAll(async () => {
  for (const [name, value] of Object.entries(SECRETS)) {
    savedEnv[name] = process.env[name];
    process.env[name] = value;
  }
  site = await serveSite(undefined);
  outsider = await serveSite(undefined, { host: '127.0.0.2' });
  site.route(
    '/opener',
    html(`<!doctype html><main id="out">opener page</main>
      <a id="link" href="/popup-link" target="_blank">open</a>
      <link rel="prefetch" href="/prefetched"><link rel="prerender" href="/prerendered">
      <script type="speculationrules">
        { "prerender": [{ "source": "list", "urls": ["/speculated-prerender"] }],
          "prefetch": [{ "source": "list", "urls": ["/speculated-prefetch"] }] }
      </script>
      <script>
        const out = document.getElementById('out');
        window.open('/popup-same');
        window.open('${outsider.origin}/popup-outside');
        document.getElementById('link').click();
        try { new SharedWorker('/shared.js'); out.append(' shared worker started'); }
        catch (error) { out.append(' no shared worker'); }
        out.append(' rendered opener');
      </script>`),
  );
  site.route('/shared.js', (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(`fetch('/from-shared-worker')`),
  );
  pool = new BrowserPool({ maxPages: 1 });
});

afterAll(async () => {
  await pool?.close();
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await site?.close();
  await outsider?.close();
  if (pool) expect(await waitForNoProcesses(pool.launchedGroups, 10_000)).toEqual([]);
});

/** The browser's processes while a page with content is open in it (so a renderer is alive). */
async function processesWithPageOpen(): Promise<BrowserProcess[]> {
  return pool.withPage({ userAgent: UA }, async (page, deadline) => {
    // No network: the content is set directly; only a live renderer is needed.
    await deadline(
      page.setContent('<p id="p">sandboxed</p><script>p.append(" and running")</script>'),
      'setContent',
    );
    expect(await deadline(page.textContent('#p'), 'textContent')).toBe('sandboxed and running');
    const browserPid = pool.launchedGroups.at(-1);
    if (browserPid === undefined) throw new Error('no browser launched');
    return browserProcesses(browserPid);
  });
}

describe('the browser runs with least privilege', () => {
  it('keeps its sandbox: renderers under seccomp-bpf in their own user namespace, as the unprivileged user when we are root', async () => {
    const processes = await processesWithPageOpen();
    const [browser] = processes;
    const renderers = processes.filter((p) => p.isRenderer);
    expect(browser, 'the browser process').toBeDefined();
    expect(renderers.length, 'a live renderer').toBeGreaterThan(0);
    for (const p of processes) expect(p.commandLine, `pid ${p.pid}`).not.toContain('--no-sandbox');
    for (const renderer of renderers) {
      expect(renderer.seccomp, `renderer ${renderer.pid} seccomp mode`).toBe(2);
      expect(renderer.noNewPrivs).toBe(true);
      expect(renderer.userNamespace, `renderer ${renderer.pid} user namespace`).not.toBe(
        browser?.userNamespace,
      );
    }
    // Chromium refuses its sandbox to root: as root, every browser process runs as the browser user.
    const expectedUid = isRoot ? lookupUser(DEFAULT_BROWSER_USER)?.uid : process.getuid?.();
    expect(expectedUid, `user ${DEFAULT_BROWSER_USER} (scripts/setup.sh creates it)`).toBeDefined();
    if (isRoot) expect(expectedUid).not.toBe(0);
    for (const p of processes)
      expect(p.uids, `pid ${p.pid} uids`).toEqual([expectedUid, expectedUid, expectedUid, expectedUid]);
  });

  it("passes none of gleaner's secrets to the browser or any renderer", { timeout: 60_000 }, async () => {
    const secretValues = Object.values(SECRETS);
    // Debian's launcher exports CHROMIUM_FLAGS into the browser's environment: found in every
    // process, it shows the memory scan does see an inherited environment.
    const control = 'CHROMIUM_FLAGS=';
    const { processes, found } = await pool.withPage({ userAgent: UA }, async (page, deadline) => {
      await deadline(page.setContent('<p>a renderer</p>'), 'setContent');
      const browserPid = pool.launchedGroups.at(-1) ?? -1;
      const live = browserProcesses(browserPid);
      return {
        processes: live,
        found: live.map((p) => ({ p, hits: memoryContains(p.pid, [...secretValues, control]) })),
      };
    });
    const [browser] = processes;
    expect(processes.filter((p) => p.isRenderer).length).toBeGreaterThan(0);
    // The browser's own environment is intact in /proc (its children's is overwritten by their titles).
    const names = (browser?.environment ?? []).map((entry) => entry.slice(0, entry.indexOf('=')));
    expect(names).toContain('PATH');
    expect(names.filter((name) => /^(GLEANER_|TEMPORAL_|DATABASE_URL$|PG)/.test(name))).toEqual([]);
    for (const { p, hits } of found)
      expect(hits, `pid ${p.pid}: ${p.commandLine.slice(0, 80)}`).toEqual([control]);
  });

  it("refuses every request of a page's popups, new windows, shared workers and speculative loads: none reaches a server", async () => {
    const page = await renderPage(pool, `${site.origin}/opener`, {
      userAgent: UA,
      network: createBrowserNetwork({
        userAgent: UA,
        allowHosts: ['127.0.0.1'],
        // robots.txt is not what this test is about: everything is allowed by it.
        robots: { check: async () => ({ allowed: true }) },
        maxBodyBytes: 1024 * 1024,
      }),
      settleMs: 2_000,
    });
    // A popup may still be loading when the page is read: give any straggler time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Each popup's navigation reached the interception, which refused it.
    const refusedPopups = page.refused.filter((r) => /not a request of the rendered page/.test(r.reason));
    expect(refusedPopups.map((r) => new URL(r.url).pathname).sort()).toEqual([
      '/popup-link',
      '/popup-outside',
      '/popup-same',
    ]);
    expect(page.html).toContain('rendered opener');
    expect(page.html).toContain('no shared worker');
    expect(site.log.map((entry) => entry.path)).toEqual(['/opener']);
    expect(outsider.log).toEqual([]);
  });

  it.runIf(isRoot)(
    'as a regular user, launches Chromium itself with its sandbox on and no secret',
    { timeout: 90_000 },
    async () => {
      const user = lookupUser(DEFAULT_BROWSER_USER);
      if (!user) throw new Error(`no user ${DEFAULT_BROWSER_USER}: run scripts/setup.sh`);
      const home = mkdtempSync(path.join(tmpdir(), 'gleaner-user-home-'));
      chownSync(home, user.uid, user.gid);
      // A regular user's gleaner, holding the same secrets this process holds.
      const child = spawn(
        '/usr/bin/setpriv',
        [
          `--reuid=${user.uid}`,
          `--regid=${user.gid}`,
          '--clear-groups',
          '/usr/bin/env',
          '-i',
          `PATH=${process.env.PATH ?? '/usr/bin:/bin'}`,
          `HOME=${home}`,
          ...Object.entries(SECRETS).map(([name, value]) => `${name}=${value}`),
          process.execPath,
          '--import',
          'tsx',
          path.join(repoRoot(), 'test/fixtures/render-sandbox-child.ts'),
        ],
        { cwd: repoRoot(), stdio: ['pipe', 'pipe', 'inherit'] },
      );
      try {
        const report = await new Promise<{ text: string; browserPid: number }>((resolve, reject) => {
          let out = '';
          child.stdout?.on('data', (chunk) => {
            out += chunk;
            const line = out.split('\n').find((l) => l.startsWith('{'));
            if (line) resolve(JSON.parse(line));
          });
          child.on('exit', (code) => reject(new Error(`child exited early with ${code}`)));
        });
        expect(report.text).toBe('page ran');
        const processes = browserProcesses(report.browserPid);
        const renderers = processes.filter((p) => p.isRenderer);
        expect(renderers.length).toBeGreaterThan(0);
        for (const p of processes) {
          expect(p.commandLine, `pid ${p.pid}`).not.toContain('--no-sandbox');
          expect(p.uids, `pid ${p.pid}`).toEqual([user.uid, user.uid, user.uid, user.uid]);
        }
        for (const renderer of renderers) expect(renderer.seccomp).toBe(2);
        for (const renderer of renderers)
          expect(memoryContains(renderer.pid, Object.values(SECRETS)), `renderer ${renderer.pid}`).toEqual(
            [],
          );
      } finally {
        child.stdin?.end();
        await new Promise((resolve) =>
          child.exitCode === null ? child.once('exit', resolve) : resolve(undefined),
        );
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  it.runIf(isRoot)(
    'as root with a profile folder the browser user cannot reach, says so instead of failing obscurely',
    async () => {
      // Playwright makes the profile folder under os.tmpdir(): here, a folder closed to other users.
      const closed = mkdtempSync(path.join(tmpdir(), 'gleaner-closed-'));
      chmodSync(closed, 0o700);
      const saved = process.env.TMPDIR;
      process.env.TMPDIR = closed;
      const pool = new BrowserPool({ maxPages: 1 });
      try {
        const failure = await pool
          .withPage({ userAgent: UA }, async () => undefined)
          .catch((error: unknown) => error);
        // A setup problem, not retried: the activity fails with this message.
        expect(failure).toBeInstanceOf(BrowserUnavailableError);
        expect((failure as Error).message).toMatch(
          /chromium-as-user: uid \d+ cannot reach its profile folder/,
        );
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
        await pool.close();
        rmSync(closed, { recursive: true, force: true });
      }
      expect(await waitForNoProcesses(pool.launchedGroups, 10_000)).toEqual([]);
    },
  );

  it.runIf(isRoot)(
    'as root with no browser user, refuses to render (before any request) and says how to fix it',
    async () => {
      const before = site.log.length;
      const saved = process.env.GLEANER_BROWSER_USER;
      process.env.GLEANER_BROWSER_USER = 'gleaner-no-such-user';
      const unsandboxable = new BrowserPool({ maxPages: 1 });
      try {
        const rendering = renderPage(unsandboxable, `${site.origin}/opener`, {
          userAgent: UA,
          network: createBrowserNetwork({
            userAgent: UA,
            allowHosts: ['127.0.0.1'],
            robots: { check: async () => ({ allowed: true }) },
            maxBodyBytes: 1024 * 1024,
          }),
        });
        await expect(rendering).rejects.toThrow(BrowserUnavailableError);
        await expect(rendering).rejects.toThrow(/scripts\/setup\.sh.*GLEANER_BROWSER_NO_SANDBOX=1/);
      } finally {
        if (saved === undefined) delete process.env.GLEANER_BROWSER_USER;
        else process.env.GLEANER_BROWSER_USER = saved;
        await unsandboxable.close();
      }
      expect(site.log.length).toBe(before);
      expect(unsandboxable.launchedGroups).toEqual([]);
    },
  );
});
