/**
 * The browser's request guard refuses, before robots.txt is even consulted, what a rendered page
 * must never load: images/fonts/media, other origins, other schemes, and addresses the SSRF guard
 * forbids (here a loopback page origin not named in allow-hosts). Robots rules, redirect hops and
 * the pinned client are covered with real Chromium in test/integration/render-network.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createRequestGuard } from '../../../activities/render/request-guard';
import type { RobotsPolicy } from '../../../activities/robots-policy';

// Reaching robots.txt would mean the guard let the request through its earlier checks.
const robotsNeverAsked = {
  check: () => {
    throw new Error('robots.txt consulted for a request that should have been refused earlier');
  },
} as unknown as RobotsPolicy;

const guardFor = (allowHosts: string[]) =>
  createRequestGuard({
    pageOrigin: 'http://127.0.0.1:8080',
    userAgent: 'ua',
    allowHosts,
    robots: robotsNeverAsked,
  });

describe('createRequestGuard', () => {
  it('skips images, fonts and media of the page', async () => {
    const guard = guardFor(['127.0.0.1']);
    for (const resourceType of ['image', 'font', 'media'])
      expect(await guard({ url: 'http://127.0.0.1:8080/x', resourceType, isNavigation: false })).toBe(
        `${resourceType} not loaded`,
      );
  });

  it('refuses other origins, private or not', async () => {
    const guard = guardFor(['127.0.0.1']);
    expect(
      await guard({ url: 'http://127.0.0.2:8080/secret', resourceType: 'fetch', isNavigation: false }),
    ).toMatch(/third-party request to http:\/\/127\.0\.0\.2:8080/);
    expect(
      await guard({
        url: 'http://169.254.169.254/latest/meta-data',
        resourceType: 'xhr',
        isNavigation: false,
      }),
    ).toMatch(/third-party/);
  });

  it('applies the SSRF guard to the page origin itself when allow-hosts does not name it', async () => {
    const guard = guardFor([]);
    expect(
      await guard({ url: 'http://127.0.0.1:8080/api', resourceType: 'fetch', isNavigation: false }),
    ).toMatch(/blocked by the SSRF guard: 127\.0\.0\.1 resolves to 127\.0\.0\.1 \(loopback\)/);
    expect(
      await guard({ url: 'http://127.0.0.1:8080/', resourceType: 'document', isNavigation: true }),
    ).toMatch(/SSRF guard/);
  });

  it('lets the navigation move to another origin (http to https), still under the SSRF guard', async () => {
    expect(
      await guardFor(['127.0.0.1'])({
        url: 'http://127.0.0.2:8443/moved',
        resourceType: 'document',
        isNavigation: true,
      }),
    ).toMatch(/blocked by the SSRF guard: 127\.0\.0\.2 resolves to 127\.0\.0\.2 \(loopback\)/);
  });

  it('sends nothing but http(s) (data: and blob: URLs never reach the guard: the browser keeps them)', async () => {
    expect(
      await guardFor([])({ url: 'file:///etc/passwd', resourceType: 'fetch', isNavigation: false }),
    ).toBe('scheme file: not allowed');
  });
});
