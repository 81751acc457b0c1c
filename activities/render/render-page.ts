/**
 * Renders one URL in the pool without the browser doing any network I/O of its own: the page's
 * document is fetched first through the browser network (guarded, DNS-pinned, redirect hops checked
 * one by one), then every request the page makes is intercepted and answered through that same
 * network, or aborted. Chromium is also launched unable to resolve any host (browser-pool.ts), so
 * a request that ever escaped interception would fail instead of reaching an unchecked address.
 * The navigation is bounded, the network is given a bounded time to settle, and the DOM is read
 * back as HTML.
 */
import type { Page, Request, Route } from 'playwright-core';
import type { BrowserFetchOutcome, BrowserNetwork } from './browser-network';
import type { BrowserPool } from './browser-pool';

export interface RenderPageOptions {
  userAgent: string;
  /** Answers every request of the page; closed when the page is done. */
  network: BrowserNetwork;
  /** Deadline for the navigation (response headers and DOMContentLoaded). @default 30000 */
  navigationTimeoutMs?: number;
  /** Longest wait for the network to go quiet after DOMContentLoaded. @default 5000 */
  settleMs?: number;
  /** The network counts as quiet after this long with no request in flight. @default 300 */
  quietMs?: number;
}

export interface RenderedPage {
  status: number;
  /** The document's URL after redirects. */
  finalUrl: string;
  /** Every URL of the document's redirect chain before `finalUrl`. */
  redirects: string[];
  /** Response headers of the document (lower-case names). */
  headers: Record<string, string>;
  /** The HTML the server sent, before any script ran. */
  rawHtml: string;
  /** The DOM after scripts ran and the network settled, serialised. */
  html: string;
  startedAtMs: number;
  totalMs: number;
  /** Requests the page made, and those refused (with why). */
  requests: number;
  refused: Array<{ url: string; reason: string }>;
}

export class NavigationRefusedError extends Error {
  override readonly name = 'NavigationRefusedError';
}

export async function renderPage(
  pool: BrowserPool,
  url: string,
  options: RenderPageOptions,
): Promise<RenderedPage> {
  const startedAtMs = Date.now();
  const navigationTimeoutMs = options.navigationTimeoutMs ?? 30_000;
  const settleMs = options.settleMs ?? 5_000;
  const quietMs = options.quietMs ?? 300;
  const { network } = options;
  try {
    // No request for a document there is no browser to render.
    pool.assertAvailable();
    const document = await network.fetch({
      url,
      method: 'GET',
      resourceType: 'document',
      isNavigation: true,
    });
    if (document.kind === 'refused') throw new NavigationRefusedError(`${document.url}: ${document.reason}`);
    if (document.kind === 'failed') throw new Error(`fetching ${document.url} failed: ${document.reason}`);
    const page: RenderedPage = {
      status: document.status,
      finalUrl: document.url,
      redirects: document.redirects,
      headers: document.headers,
      rawHtml: document.text,
      html: '',
      startedAtMs,
      totalMs: 0,
      requests: 1,
      refused: [],
    };
    // Nothing for a browser to run: an error status or not a page at all is reported as it is.
    const type = (document.headers['content-type'] ?? 'text/html').split(';')[0]?.trim().toLowerCase();
    const isHtml = type === 'text/html' || type === 'application/xhtml+xml';
    if (document.status < 200 || document.status >= 300 || !isHtml)
      return { ...page, totalMs: Date.now() - startedAtMs };
    return await pool.withPage({ userAgent: options.userAgent }, async (browserPage, deadline) => {
      // Playwright's 'networkidle' waits a fixed 500 ms; counting our own requests settles sooner.
      let inFlight = 0;
      let lastActivityMs = Date.now();
      const finished = () => {
        inFlight = Math.max(0, inFlight - 1);
        lastActivityMs = Date.now();
      };
      browserPage.on('request', () => {
        inFlight++;
        lastActivityMs = Date.now();
      });
      browserPage.on('requestfinished', finished);
      browserPage.on('requestfailed', finished);
      let documentServed = false;
      const refuse = (route: Route, url: string, reason: string) => {
        page.refused.push({ url, reason });
        return route.abort('blockedbyclient');
      };
      const answer = async (route: Route): Promise<void> => {
        const request = route.request();
        const requestUrl = request.url();
        // data: and blob: URLs are the page's own bytes; nothing leaves the browser for them.
        if (requestUrl.startsWith('data:') || requestUrl.startsWith('blob:')) return route.continue();
        if (!isFromPage(request, browserPage))
          return refuse(
            route,
            requestUrl,
            'not a request of the rendered page (a popup, another page or a worker)',
          );
        const isNavigation = request.isNavigationRequest() && request.frame() === browserPage.mainFrame();
        if (isNavigation) {
          if (!documentServed && requestUrl === withoutHash(document.url)) {
            documentServed = true;
            return fulfil(route, document);
          }
          // The crawler follows links itself; a page that navigates away would be a different page.
          return refuse(route, requestUrl, 'the page may not navigate away');
        }
        page.requests++;
        const outcome = await network.fetch({
          url: requestUrl,
          method: request.method(),
          resourceType: request.resourceType(),
          isNavigation: false,
        });
        if (outcome.kind === 'response') return fulfil(route, outcome);
        page.refused.push({ url: outcome.url, reason: outcome.reason });
        return route.abort(outcome.kind === 'refused' ? 'blockedbyclient' : 'failed');
      };
      // On the context, not the page: popups and other pages the page opens belong to the context,
      // and a page-level route never sees their requests (Chromium alone would send them).
      const context = browserPage.context();
      await deadline(
        context.route('**/*', (route) =>
          answer(route).catch(() => route.abort('failed').catch(() => undefined)),
        ),
        'context.route',
      );
      // WebSockets are not routed by route(): refuse them before any connection is made.
      await deadline(
        context.routeWebSocket(/.*/, (socket) => {
          page.refused.push({ url: socket.url(), reason: 'websocket not opened' });
          return socket.close();
        }),
        'context.routeWebSocket',
      );
      // A shared worker's requests are not intercepted at all (Playwright routes pages and their
      // dedicated workers only): the page gets no SharedWorker to start one with.
      await deadline(context.addInitScript({ content: 'delete globalThis.SharedWorker;' }), 'addInitScript');
      // A popup is a page the crawler did not ask for: closed at once (its navigation is refused above).
      context.on('page', (opened) => {
        if (opened !== browserPage) opened.close().catch(() => undefined);
      });
      await deadline(
        browserPage.goto(document.url, { waitUntil: 'domcontentloaded', timeout: navigationTimeoutMs }),
        'page.goto',
        navigationTimeoutMs + 1_000,
      );
      // Bounded: a page that polls forever is read as it is when the time is up.
      const settleBy = Date.now() + settleMs;
      while (Date.now() < settleBy && (inFlight > 0 || Date.now() - lastActivityMs < quietMs)) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const html = await deadline(browserPage.content(), 'page.content');
      return { ...page, html, totalMs: Date.now() - startedAtMs };
    });
  } finally {
    network.close();
  }
}

function fulfil(route: Route, response: Extract<BrowserFetchOutcome, { kind: 'response' }>): Promise<void> {
  return route.fulfill({ status: response.status, headers: response.headers, body: response.body });
}

/** Whether `request` comes from a frame of `page` (a service worker's or a popup's does not). */
function isFromPage(request: Request, page: Page): boolean {
  try {
    return request.frame().page() === page;
  } catch {
    // No frame: a service or shared worker's request, or a new window's first navigation.
    return false;
  }
}

function withoutHash(url: string): string {
  const hash = url.indexOf('#');
  return hash === -1 ? url : url.slice(0, hash);
}
