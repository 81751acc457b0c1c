import { describe, expect, it } from 'vitest';
import {
  assessHtml,
  learnTier,
  pageKind,
  planFetch,
  RENDER_RECHECK_EVERY,
  type RenderLearning,
  renderAfterFetch,
  renderPaid,
} from '../../domain/render-decision';

const prose = 'A paragraph of ordinary documentation text that a reader would see. '.repeat(30);

describe('assessHtml', () => {
  it('says a static page needs no browser', () => {
    const verdict = assessHtml(
      `<html><head><title>x</title><script src="/a.js"></script></head><body><main><p>${prose}</p></main></body></html>`,
    );
    expect(verdict.needsRender).toBe(false);
    expect(verdict.visibleTextChars).toBeGreaterThan(1500);
  });

  it('flags an empty app root', () => {
    const verdict = assessHtml(
      '<html><body><div id="root"></div><script src="/bundle.js"></script></body></html>',
    );
    expect(verdict.needsRender).toBe(true);
    expect(verdict.reasons.join()).toContain('empty app root #root');
  });

  it('does not flag an app root the server already filled (server-side rendering)', () => {
    const verdict = assessHtml(
      `<div id="__next"><article><p>${prose}</p></article></div><script id="__NEXT_DATA__">{}</script>`,
    );
    expect(verdict.needsRender).toBe(false);
  });

  it('flags <noscript> asking for JavaScript on a thin page', () => {
    const verdict = assessHtml(
      '<body><p>Loading…</p><noscript>Please enable JavaScript to continue.</noscript></body>',
    );
    expect(verdict.reasons).toContain('<noscript> asks for JavaScript');
  });

  it('flags little text against much script', () => {
    const script = `var x = ${JSON.stringify('y'.repeat(20_000))};`;
    const verdict = assessHtml(`<body><p>Hi</p><script>${script}</script></body>`);
    expect(verdict.needsRender).toBe(true);
    expect(verdict.scriptChars).toBeGreaterThan(20_000);
  });

  it('flags a shell: almost no text and scripts to load, whatever the root is called', () => {
    const verdict = assessHtml(
      '<html><head><title>Shop</title><script src="/assets/index-3f2a.js"></script></head><body><div id="container"></div></body></html>',
    );
    expect(verdict.needsRender).toBe(true);
    expect(verdict.externalScripts).toBe(1);
  });

  it('does not flag a short reference page because a doc generator loads scripts on it', () => {
    const scripts = ['jquery.js', 'underscore.js', 'doctools.js', 'language_data.js', 'searchtools.js']
      .map((src) => `<script src="_static/${src}"></script>`)
      .join('');
    const text =
      'skopt.benchmarks.bench1(x): a benchmark function for test purposes. Parameters: x, array. '.repeat(4);
    const nav = [
      '/',
      '/install.html',
      '/user_guide.html',
      '/modules/classes.html',
      '/auto_examples/index.html',
      '/development.html',
    ]
      .map((href) => `<a href="${href}">${href}</a>`)
      .join(' ');
    const verdict = assessHtml(
      `<html><head><title>bench1</title>${scripts}<script>var DOCUMENTATION_OPTIONS = ${JSON.stringify({ pad: 'x'.repeat(4000) })};</script></head><body><nav>${nav}</nav><main><h1>bench1</h1><p>${text}</p></main></body></html>`,
    );
    expect(verdict.visibleTextChars).toBeLessThan(1500);
    expect(verdict.needsRender).toBe(false);
  });

  it('leaves a meta-refresh redirect page to the crawler', () => {
    const verdict = assessHtml(
      '<html><head><meta http-equiv="Refresh" content="0; url=index.html"></head><body><p>Redirecting to <a href="index.html">the main page</a>.</p><script src="https://example.com/w.js"></script></body></html>',
    );
    expect(verdict.needsRender).toBe(false);
  });

  it('flags a framework marker only with almost no text', () => {
    expect(assessHtml('<body ng-app="x"><p>{{title}}</p></body>').needsRender).toBe(true);
    expect(assessHtml(`<body ng-app="x"><p>${prose}</p></body>`).needsRender).toBe(false);
  });

  it('does not count script, style or noscript text as visible', () => {
    const verdict = assessHtml(
      '<body><style>p{color:red}</style><script>var a=1</script><noscript>enable js</noscript><p>seen</p></body>',
    );
    expect(verdict.visibleTextChars).toBe(4);
  });
});

describe('learning by kind of page', () => {
  it('groups pages by first segment and depth', () => {
    expect(pageKind('http://a/app/items/7')).toBe(pageKind('http://a/app/items/8?x=1'));
    expect(pageKind('http://a/app/items/7')).not.toBe(pageKind('http://a/docs/items/7'));
    expect(pageKind('http://a/')).toBe('/|0');
  });

  it('renderPaid wants clearly more text', () => {
    expect(renderPaid(0, 500)).toBe(true);
    expect(renderPaid(1000, 1100)).toBe(false);
    expect(renderPaid(1000, 1600)).toBe(true);
  });

  it('a kind that proved to need rendering goes straight to the browser, rechecked now and then', () => {
    const learning: RenderLearning = {};
    const url = (n: number) => `http://a/app/items/${n}`;
    expect(planFetch('auto', learning, url(1))).toEqual({ tier: 'http', assess: true });
    learnTier(learning, url(1), 'browser', true);
    expect(planFetch('auto', learning, url(2)).tier).toBe('http');
    learnTier(learning, url(2), 'browser', true);
    const tiers = Array.from(
      { length: 3 * RENDER_RECHECK_EVERY },
      (_, i) => planFetch('auto', learning, url(i + 3)).tier,
    );
    expect(tiers.filter((t) => t === 'http')).toHaveLength(3);
    expect(tiers.filter((t) => t === 'browser')).toHaveLength(3 * RENDER_RECHECK_EVERY - 3);
    // A re-check that finds plain HTML enough flips the kind back.
    learnTier(learning, url(99), 'http', false);
    expect(planFetch('auto', learning, url(100)).tier).toBe('http');
  });

  it('a kind whose renders did not pay stops rendering, except for an occasional re-check', () => {
    const learning: RenderLearning = {};
    const url = 'http://a/blog/post-1';
    const looksDynamic = { needsRender: true };
    expect(renderAfterFetch(learning, url, looksDynamic)).toBe(true);
    learnTier(learning, url, 'http', true);
    learnTier(learning, url, 'http', true);
    const renders = Array.from({ length: 2 * RENDER_RECHECK_EVERY }, () =>
      renderAfterFetch(learning, url, looksDynamic),
    );
    expect(renders.filter(Boolean)).toHaveLength(2);
    expect(renderAfterFetch(learning, url, { needsRender: false })).toBe(false);
  });

  it('never and always ignore the learning', () => {
    const learning: RenderLearning = {};
    expect(planFetch('never', learning, 'http://a/x')).toEqual({ tier: 'http', assess: false });
    expect(planFetch('always', learning, 'http://a/x')).toEqual({ tier: 'browser', assess: false });
  });
});
