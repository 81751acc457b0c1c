/**
 * Renders one URL in the pool: every request the page makes passes the request guard first
 * (refused ones are aborted before anything leaves the browser), the navigation is bounded, the
 * network is given a bounded time to settle, and the DOM is read back as HTML.
 */
import type { BrowserPool } from './browser-pool';

export interface GuardedRequest {
  url: string;
  /** Playwright's resource type: document, script, xhr, fetch, image, font, media, stylesheet… */
  resourceType: string;
  /** The top-level navigation (the page itself), not a sub-resource. */
  isNavigation: boolean;
}

/** Returns why a request is refused, or undefined to let it through. */
export type RequestGuard = (request: GuardedRequest) => Promise<string | undefined>;

export interface RenderPageOptions {
  userAgent: string;
  guard: RequestGuard;
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
  return pool.withPage({ userAgent: options.userAgent }, async (page, deadline) => {
    const refused: RenderedPage['refused'] = [];
    let requests = 0;
    // Playwright's 'networkidle' waits a fixed 500 ms; counting our own requests settles sooner.
    let inFlight = 0;
    let lastActivityMs = Date.now();
    const finished = () => {
      inFlight = Math.max(0, inFlight - 1);
      lastActivityMs = Date.now();
    };
    page.on('request', () => {
      inFlight++;
      lastActivityMs = Date.now();
    });
    page.on('requestfinished', finished);
    page.on('requestfailed', finished);
    await deadline(
      page.route('**/*', async (route) => {
        const request = route.request();
        requests++;
        const isNavigation = request.isNavigationRequest() && request.frame() === page.mainFrame();
        let reason: string | undefined;
        try {
          reason = await options.guard({
            url: request.url(),
            resourceType: request.resourceType(),
            isNavigation,
          });
        } catch (error) {
          reason = `guard failed: ${(error as Error).message}`;
        }
        if (reason) {
          refused.push({ url: request.url(), reason });
          await route.abort('blockedbyclient').catch(() => undefined);
        } else {
          await route.continue().catch(() => undefined);
        }
      }),
      'page.route',
    );
    const response = await deadline(
      page.goto(url, { waitUntil: 'domcontentloaded', timeout: navigationTimeoutMs }),
      'page.goto',
      navigationTimeoutMs + 1_000,
    ).catch((error: Error) => {
      const refusal = refused.find((entry) => entry.url === url);
      if (refusal) throw new NavigationRefusedError(`${url}: ${refusal.reason}`);
      throw error;
    });
    if (!response) throw new Error(`navigation to ${url} produced no response`);
    const rawHtml = await deadline(response.text(), 'response.text').catch(() => '');
    // Bounded: a page that polls forever is read as it is when the time is up.
    const settleBy = Date.now() + settleMs;
    while (Date.now() < settleBy && (inFlight > 0 || Date.now() - lastActivityMs < quietMs)) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const html = await deadline(page.content(), 'page.content');
    return {
      status: response.status(),
      finalUrl: page.url(),
      headers: await deadline(response.allHeaders(), 'response.allHeaders'),
      rawHtml,
      html,
      startedAtMs,
      totalMs: Date.now() - startedAtMs,
      requests,
      refused,
    };
  });
}
