/**
 * The browser does no network I/O of its own: real Chromium, real loopback servers, real robots
 * policy on a real Postgres, and names resolved by an injected resolver (so hostnames can be tested
 * without the internet: Chromium itself could resolve none of them). Every redirect hop of the
 * page's navigation and of its scripts' requests is checked before it is sent; a hostname that
 * (re)resolves to a private address gets nothing, and no connection to it is even attempted
 * (every client socket of this process is watched). Traffic goes to 127.0.0.0/8 only.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../../activities/http/ssrf-guard';
import { type BrowserNetworkOptions, createBrowserNetwork } from '../../activities/render/browser-network';
import { BrowserPool } from '../../activities/render/browser-pool';
import { NavigationRefusedError, renderPage } from '../../activities/render/render-page';
import { SubresourceCache } from '../../activities/render/subresource-cache';
import { createRobotsPolicy, type RobotsPolicy } from '../../activities/robots-policy';
import { migrate } from '../../db/migrate';
import { PgDatabase } from '../../db/pg-database';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';
import { waitForNoProcesses } from '../../testbed/process-groups';
import { type SiteServer, serveSite } from '../../testbed/site-server';

const UA = 'gleaner-test/1.0';

let postgres: NativePostgres;
let db: PgDatabase;
let robots: RobotsPolicy;
let site: SiteServer;
let outsider: SiteServer;
let pool: BrowserPool;
/** A loopback server that records every WebSocket upgrade asked of it. */
let sockets: http.Server;
const upgrades: string[] = [];

/** Host names the fake DNS knows; `rebind.test` answers loopback until `rebound` is set. */
let rebound = false;
const resolverCalls: string[] = [];
const resolve: Resolver = async (hostname) => {
  resolverCalls.push(hostname);
  if (hostname === 'app.test') return [{ address: '127.0.0.1', family: 4 }];
  if (hostname === 'internal.test') return [{ address: '10.0.0.1', family: 4 }];
  if (hostname === 'rebind.test') return [{ address: rebound ? '10.0.0.1' : '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' });
};

/** Every address a socket of this process was about to connect to (after its lookup). */
const connects: string[] = [];
const onSocket = (message: unknown) => {
  const { socket } = message as { socket: Socket };
  socket.on('lookup', (error: Error | null, address: string) => {
    if (!error) connects.push(address);
  });
};

const html = (res: http.ServerResponse, body: string) =>
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
const redirect = (to: string) => (_req: http.IncomingMessage, res: http.ServerResponse) =>
  res.writeHead(302, { location: to }).end();

/** A page whose script reads each URL and writes what it got (or "refused") into the DOM. */
const reader = (urls: string[]) =>
  `<!doctype html><html><body><main id="out"><h1>reader</h1></main><script>
    for (const url of ${JSON.stringify(urls)}) {
      fetch(url).then((r) => r.text()).then(
        (t) => document.getElementById('out').append(' got ' + url + ': ' + t),
        () => document.getElementById('out').append(' refused ' + url),
      );
    }
  </script></body></html>`;

const text = (body: string) => (_req: http.IncomingMessage, res: http.ServerResponse) =>
  res.writeHead(200, { 'content-type': 'text/plain' }).end(body);

function network(allowHosts: string[], extra: Partial<BrowserNetworkOptions> = {}) {
  return createBrowserNetwork({
    userAgent: UA,
    allowHosts,
    robots,
    maxBodyBytes: 1024 * 1024,
    resolve,
    ...extra,
  });
}

/** Renders `url` in the shared browser pool, every request going through a network allowing `allowHosts`. */
const render = (url: string, allowHosts = ['127.0.0.1']) =>
  renderPage(pool, url, { userAgent: UA, network: network(allowHosts) });

beforeAll(async () => {
  diagnosticsChannel.subscribe('net.client.socket', onSocket);
  postgres = await startNativePostgres();
  db = new PgDatabase(postgres.url);
  await migrate(db);
  robots = createRobotsPolicy({ db, resolve });
  pool = new BrowserPool({ maxPages: 1 });
  outsider = await serveSite(undefined, { host: '127.0.0.2' });
  outsider.route('/secret', text('outsiderleakedsecret'));
  sockets = http.createServer((_req, res) => res.writeHead(404).end());
  sockets.on('upgrade', (req, socket) => {
    upgrades.push(req.url ?? '');
    socket.destroy();
  });
  await new Promise<void>((done) => sockets.listen(0, '127.0.0.1', done));
  const socketsPort = (sockets.address() as AddressInfo).port;
  site = await serveSite(undefined);
  site.route('/socket', (_req, res) =>
    html(
      res,
      `<main id="out">socket page</main><script>
        for (const url of ['ws://127.0.0.1:${socketsPort}/a', 'ws://' + location.host + '/b']) {
          const ws = new WebSocket(url);
          ws.onopen = () => document.getElementById('out').append(' opened ' + url);
        }
      </script>`,
    ),
  );
  site.route('/robots.txt', text('User-agent: *\nDisallow: /private/\n'));
  site.route('/api/data', text('publicdataword'));
  site.route('/private/secret', text('robotsleakedsecret'));
  site.route('/api/inside', redirect('/api/data'));
  site.route('/api/to-private', redirect('/private/secret'));
  site.route('/api/to-outsider', redirect(`${outsider.origin}/secret`));
  site.route('/api/to-internal', redirect(`http://internal.test:${site.port}/api/data`));
  site.route('/reader', (_req, res) =>
    html(res, reader(['/api/inside', '/api/to-private', '/api/to-outsider', '/api/to-internal'])),
  );
  site.route('/named', (_req, res) => html(res, reader(['/api/data'])));
  site.route('/rebind', (_req, res) => {
    // From now on the name points at a private address: the page's own requests must not follow it.
    rebound = true;
    html(res, reader(['/api/data']));
  });
  site.route('/old', redirect('/named'));
  site.route('/old-private', redirect('/private/page'));
  site.route('/old-internal', redirect(`http://internal.test:${site.port}/named`));
  site.route('/private/page', (_req, res) => html(res, '<p>robotsleakedpage</p>'));
  site.route('/assets', (_req, res) =>
    html(
      res,
      `<!doctype html><html><head><link rel="stylesheet" href="/style.css">` +
        `<script src="${outsider.origin}/secret"></script></head><body><p>assets page</p>` +
        `<img src="/img.png"><video src="/clip.mp4"></video>` +
        `<style>@font-face { font-family: x; src: url(/font.woff2); } p { font-family: x; }</style></body></html>`,
    ),
  );
  site.route('/style.css', (_req, res) => res.writeHead(200, { 'content-type': 'text/css' }).end('p{}'));
  // Three pages sharing one bundle and one stylesheet; the page's own data request is never cached.
  for (const name of ['one', 'two', 'three'])
    site.route(`/paced/${name}`, (_req, res) =>
      html(
        res,
        `<!doctype html><html><head><link rel="stylesheet" href="/paced/site.css">` +
          `<script src="/paced/bundle.js"></script><script src="/paced/no-store.js"></script></head>` +
          `<body><main id="out">paced ${name}</main><script>fetch('/api/data').then((r) => r.text())` +
          `.then((t) => document.getElementById('out').append(' got /api/data: ' + t));</script></body></html>`,
      ),
    );
  site.route('/paced/site.css', (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/css', 'cache-control': 'max-age=3600' }).end('main{}'),
  );
  site.route('/paced/bundle.js', (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/javascript' })
      .end("document.documentElement.dataset.bundle = 'bundleword';"),
  );
  site.route('/paced/no-store.js', (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' }).end('void 0;'),
  );
});

afterAll(async () => {
  diagnosticsChannel.unsubscribe('net.client.socket', onSocket);
  await pool?.close();
  if (pool) expect(await waitForNoProcesses(pool.launchedGroups, 10_000)).toEqual([]);
  await site?.close();
  await outsider?.close();
  await new Promise((done) => sockets?.close(done));
  await db?.close();
  await postgres?.stop();
});

const requested = (server: SiteServer, path: string) => server.log.some((entry) => entry.path === path);

describe('the browser network', () => {
  it('renders a page on a hostname Chromium cannot resolve: every request went through the pinned client', async () => {
    const page = await render(`http://app.test:${site.port}/named`, ['app.test']);
    expect(page.status).toBe(200);
    expect(page.html).toContain('got /api/data: publicdataword');
    expect(resolverCalls).toContain('app.test');
    // The socket watch sees the pinned client's connections (so its silence below means something).
    expect(connects).toContain('127.0.0.1');
    expect(site.log.find((entry) => entry.path === '/api/data')?.userAgent).toBe(UA);
  });

  it('a name that rebinds to a private address after the check gets nothing and is never connected to', async () => {
    const before = site.log.length;
    const page = await render(`http://rebind.test:${site.port}/rebind`);
    expect(rebound).toBe(true);
    expect(page.html).toContain('refused /api/data');
    expect(page.html).not.toContain('publicdataword');
    expect(page.refused).toContainEqual({
      url: `http://rebind.test:${site.port}/api/data`,
      reason: expect.stringMatching(/SSRF guard: rebind\.test resolves to 10\.0\.0\.1 \(private\)/),
    });
    expect(site.log.slice(before).map((entry) => entry.path)).not.toContain('/api/data');
    expect(connects).not.toContain('10.0.0.1');
  });

  it("checks every redirect hop of a script's requests: robots, origin and address", async () => {
    const page = await render(`${site.origin}/reader`);
    // A same-origin redirect to an allowed path is followed.
    expect(page.html).toContain('got /api/inside: publicdataword');
    for (const hop of ['/api/to-private', '/api/to-outsider', '/api/to-internal'])
      expect(page.html).toContain(`refused ${hop}`);
    expect(page.html).not.toMatch(/leakedsecret/);
    expect(page.refused).toEqual(
      expect.arrayContaining([
        { url: `${site.origin}/private/secret`, reason: 'disallowed by robots.txt' },
        { url: `${outsider.origin}/secret`, reason: `third-party request to ${outsider.origin}` },
        {
          url: `http://internal.test:${site.port}/api/data`,
          reason: `third-party request to http://internal.test:${site.port}`,
        },
      ]),
    );
    // The first hops were asked for; none of the refused targets ever was.
    for (const hop of ['/api/inside', '/api/to-private', '/api/to-outsider', '/api/to-internal'])
      expect(requested(site, hop), hop).toBe(true);
    expect(requested(site, '/private/secret')).toBe(false);
    expect(outsider.log).toEqual([]);
  });

  it('checks every redirect hop of the navigation', async () => {
    const followed = await render(`${site.origin}/old`);
    expect(followed.finalUrl).toBe(`${site.origin}/named`);
    expect(followed.redirects).toEqual([`${site.origin}/old`]);
    expect(followed.html).toContain('got /api/data: publicdataword');

    await expect(render(`${site.origin}/old-private`)).rejects.toThrow(
      new NavigationRefusedError(`${site.origin}/private/page: disallowed by robots.txt`),
    );
    expect(requested(site, '/private/page')).toBe(false);

    await expect(render(`${site.origin}/old-internal`)).rejects.toThrow(
      /internal\.test:\d+\/named: blocked by the SSRF guard: internal\.test resolves to 10\.0\.0\.1/,
    );
    expect(connects).not.toContain('10.0.0.1');
  });

  it('images, fonts, media and third-party scripts stay unloaded; stylesheets of the page load', async () => {
    const page = await render(`${site.origin}/assets`);
    expect(page.html).toContain('assets page');
    expect(requested(site, '/style.css')).toBe(true);
    for (const path of ['/img.png', '/clip.mp4', '/font.woff2'])
      expect(requested(site, path), path).toBe(false);
    expect(outsider.log).toEqual([]);
    const reasons = page.refused.map((entry) => entry.reason);
    expect(reasons).toContain('image not loaded');
    expect(reasons).toContain(`third-party request to ${outsider.origin}`);
  });

  it('opens no WebSocket (page.route does not see them): closed before any connection', async () => {
    const page = await render(`${site.origin}/socket`);
    expect(page.html).toContain('socket page');
    // The page may see a socket open (Playwright's stand-in) that closes at once; no server sees it.
    expect(page.refused.filter((entry) => entry.reason === 'websocket not opened')).toHaveLength(2);
    expect(upgrades).toEqual([]);
    expect(requested(site, '/b')).toBe(false);
  });

  it('backstop: a request that escaped interception fails in Chromium itself, even to an IP literal', async () => {
    const before = site.log.length;
    await expect(
      pool.withPage({ userAgent: UA }, (page) => page.goto(`${site.origin}/named`, { timeout: 10_000 })),
    ).rejects.toThrow(/ERR_NAME_NOT_RESOLVED/);
    expect(site.log.slice(before)).toEqual([]);
  });

  it('a hostname resolving to a private address is refused before any connection', async () => {
    const outcome = await network([]).fetch({
      url: 'http://internal.test/',
      method: 'GET',
      resourceType: 'document',
      isNavigation: true,
    });
    expect(outcome).toMatchObject({
      kind: 'refused',
      url: 'http://internal.test/',
      reason: expect.stringMatching(/SSRF guard: internal\.test resolves to 10\.0\.0\.1 \(private\)/),
    });
    expect(connects).not.toContain('10.0.0.1');
  });

  it("keeps the origin's gap between a rendered page's own requests, and reuses scripts and stylesheets", async () => {
    const gapMs = 250;
    const cache = new SubresourceCache();
    const before = site.log.length;
    for (const name of ['one', 'two', 'three']) {
      const page = await renderPage(pool, `${site.origin}/paced/${name}`, {
        userAgent: UA,
        network: network(['127.0.0.1'], { minGapMs: gapMs, cache }),
      });
      expect(page.html).toContain(`paced ${name}`);
      expect(page.html).toContain('data-bundle="bundleword"');
      expect(page.html).toContain('got /api/data: publicdataword');
    }
    const log = site.log.slice(before);
    const count = (path: string) => log.filter((entry) => entry.path === path).length;
    // The bundle and stylesheet were asked for once; no-store and data requests on every page.
    expect(count('/paced/bundle.js')).toBe(1);
    expect(count('/paced/site.css')).toBe(1);
    expect(count('/paced/no-store.js')).toBe(3);
    expect(count('/api/data')).toBe(3);
    expect(cache.hits).toBeGreaterThanOrEqual(4);
    // Within each render, one request at a time and the gap from each response's end to the next request.
    for (const name of ['one', 'two', 'three']) {
      const start = log.findIndex((entry) => entry.path === `/paced/${name}`);
      const isPage = (path: string) => /^\/paced\/(one|two|three)$/.test(path);
      const next = log.findIndex((entry, i) => i > start && isPage(entry.path));
      const own = log.slice(start, next === -1 ? undefined : next);
      expect(own.length).toBeGreaterThanOrEqual(3);
      for (let i = 1; i < own.length; i++) {
        const gap = (own[i]?.startedAtMs ?? 0) - (own[i - 1]?.endedAtMs ?? 0);
        expect(gap, `${own[i - 1]?.path} → ${own[i]?.path}`).toBeGreaterThanOrEqual(gapMs - 5);
      }
    }
  });

  it('refuses a sub-resource whose turn would come after the time budget, and still renders the page', async () => {
    const before = site.log.length;
    const page = await renderPage(pool, `${site.origin}/paced/one`, {
      userAgent: UA,
      network: network(['127.0.0.1'], { minGapMs: 2_000, sendByMs: Date.now() + 1_000 }),
    });
    expect(page.html).toContain('paced one');
    expect(page.refused).toContainEqual({
      url: `${site.origin}/paced/site.css`,
      reason: "not requested: the politeness gap of 2000 ms would pass the page's time budget",
    });
    expect(site.log.slice(before).map((entry) => entry.path)).toEqual(['/paced/one']);
  });
});
