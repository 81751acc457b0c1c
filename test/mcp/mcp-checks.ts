/**
 * What every transport of the MCP server must answer, asserted through the SDK's own `Client`
 * against the corpus of mcp-corpus.ts. The stdio and HTTP test files connect a client their way and
 * run these.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect, it } from 'vitest';
import { BAYES_URL, CRAWL_ID, LONG_MARKDOWN, LONG_URL, ORIGIN, REMOVED_URL } from './mcp-corpus';

export const READ_TOOLS = ['crawl_status', 'fetch_page', 'get_context', 'list_sources', 'search'];

export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

export function textOf(result: CallToolResult): string {
  return result.content
    .filter((item): item is { type: 'text'; text: string } => item.type === 'text')
    .map((item) => item.text)
    .join('\n');
}

export function defineToolChecks(client: () => Client): void {
  it('lists exactly the read tools, each with a description and an input schema', async () => {
    const { tools } = await client().listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
    for (const tool of tools) {
      expect(tool.description?.length ?? 0).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    const search = tools.find((t) => t.name === 'search');
    expect(search?.inputSchema.required).toEqual(['query']);
    expect(Object.keys(search?.inputSchema.properties ?? {}).sort()).toEqual(
      ['crawl', 'domain', 'includeFlagged', 'k', 'lang', 'prefix', 'query', 'tags'].sort(),
    );
    expect(tools.find((t) => t.name === 'fetch_page')?.inputSchema.required).toEqual(['url']);
  });

  it('search returns numbered passages with each full URL in the text and in structured content', async () => {
    const result = await call(client(), 'search', { query: 'Gaussian process surrogate model', k: 3 });
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    expect(text).toContain(`[1] Bayesian optimisation guide`);
    expect(text).toContain(`URL: ${BAYES_URL}`);
    const passages = (result.structuredContent as { passages: Array<Record<string, unknown>> }).passages;
    expect(passages.length).toBeGreaterThan(0);
    expect(passages.length).toBeLessThanOrEqual(3);
    expect(passages[0]).toMatchObject({ n: 1, url: BAYES_URL, title: 'Bayesian optimisation guide' });
    expect(passages[0]?.headingPath).toEqual(['Bayesian optimisation']);
    expect(typeof passages[0]?.score).toBe('number');
    // Every passage's URL is in the text, not only the first.
    for (const p of passages) expect(text).toContain(`URL: ${p.url}`);
  });

  it('search filters by domain and by tag', async () => {
    const elsewhere = await call(client(), 'search', { query: 'Gaussian process', domain: 'other.example' });
    expect(elsewhere.isError).toBeFalsy();
    expect((elsewhere.structuredContent as { passages: unknown[] }).passages).toEqual([]);
    expect(textOf(elsewhere)).toContain('No passages found');
    const tagged = await call(client(), 'search', { query: 'acquisition', tags: ['gaussian-process'] });
    const urls = (tagged.structuredContent as { passages: Array<{ url: string }> }).passages.map(
      (p) => p.url,
    );
    expect(urls.length).toBeGreaterThan(0);
    expect(new Set(urls)).toEqual(new Set([BAYES_URL]));
  });

  it('fetch_page returns the Markdown with title, URL, fetch time, content hash, summary and tags', async () => {
    const result = await call(client(), 'fetch_page', { url: BAYES_URL });
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    expect(text).toContain('Title: Bayesian optimisation guide');
    expect(text).toContain(`URL: ${BAYES_URL}`);
    expect(text).toMatch(/Fetched: \d{4}-\d\d-\d\dT/);
    expect(text).toMatch(/Content SHA-256: [0-9a-f]{32}/);
    expect(text).toContain('Summary: How gp_minimize finds minima with a Gaussian process.');
    expect(text).toContain('Tags: #gaussian-process #optimization');
    expect(text).toContain('Expected improvement picks the next point to evaluate.');
    expect(result.structuredContent).toMatchObject({
      url: BAYES_URL,
      title: 'Bayesian optimisation guide',
      tags: ['gaussian-process', 'optimization'],
      offset: 0,
      nextOffset: null,
    });
  });

  it('fetch_page pages a long page: each part says how to get the next, and the parts make the whole', async () => {
    let offset: number | null = 0;
    let whole = '';
    let parts = 0;
    while (offset !== null) {
      const result = await call(client(), 'fetch_page', { url: LONG_URL, offset, maxChars: 1000 });
      expect(result.isError).toBeFalsy();
      const structured = result.structuredContent as {
        markdown: string;
        nextOffset: number | null;
        totalChars: number;
      };
      expect(structured.totalChars).toBe(LONG_MARKDOWN.length);
      if (structured.nextOffset !== null) {
        expect(textOf(result)).toContain(`"offset": ${structured.nextOffset}`);
      } else {
        expect(textOf(result)).not.toContain('Continues');
      }
      whole += structured.markdown;
      offset = structured.nextOffset;
      parts += 1;
    }
    // A part may end a character early, before an emoji it would cut in two.
    expect(parts).toBeGreaterThanOrEqual(Math.ceil(LONG_MARKDOWN.length / 1000));
    expect(parts).toBeLessThanOrEqual(Math.ceil(LONG_MARKDOWN.length / 999));
    expect(whole).toBe(LONG_MARKDOWN);
  });

  it('fetch_page never cuts a part between the two halves of an emoji', async () => {
    const emoji = LONG_MARKDOWN.lastIndexOf('📈');
    expect(emoji).toBeGreaterThan(100);
    // A part that would end between the emoji's two UTF-16 units.
    const offset = emoji + 1 - 100;
    const result = await call(client(), 'fetch_page', { url: LONG_URL, offset, maxChars: 100 });
    const { markdown, nextOffset } = result.structuredContent as { markdown: string; nextOffset: number };
    expect(nextOffset).toBe(emoji);
    expect(markdown).toBe(LONG_MARKDOWN.slice(offset, emoji));
    // Every part is well-formed text: no lone surrogate.
    expect(markdown).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it('bad arguments come back as tool errors with a reason', async () => {
    const zeroK = await call(client(), 'search', { query: 'gaussian', k: 0 });
    expect(zeroK.isError).toBe(true);
    expect(textOf(zeroK)).toMatch(/\bk\b/);
    // The tool's argument name, not the search function's (`pathPrefix`).
    const badPrefix = await call(client(), 'search', { query: 'gaussian', prefix: 'docs' });
    expect(badPrefix.isError).toBe(true);
    expect(textOf(badPrefix)).toMatch(/^prefix must start with "\/"/);
    const noQuery = await call(client(), 'search', {});
    expect(noQuery.isError).toBe(true);
    expect(textOf(noQuery)).toContain('query');
    const wrongType = await call(client(), 'search', { query: 42 });
    expect(wrongType.isError).toBe(true);
    const badUrl = await call(client(), 'fetch_page', { url: 'not a url' });
    expect(badUrl.isError).toBe(true);
    expect(textOf(badUrl)).toContain('not a valid http(s) URL');
    const smallBudget = await call(client(), 'get_context', { question: 'gaussian', budgetTokens: 10 });
    expect(smallBudget.isError).toBe(true);
    expect(textOf(smallBudget)).toContain('budgetTokens');
    const unknownTool = await call(client(), 'no_such_tool', {});
    expect(unknownTool.isError).toBe(true);
  });

  it('an argument the tool does not name is a tool error naming it, not silently dropped', async () => {
    // `pathPrefix` is the search function's name for the tool's `prefix`: dropped, it searched everything.
    const misnamed = await call(client(), 'search', { query: 'gaussian', pathPrefix: '/modules/' });
    expect(misnamed.isError).toBe(true);
    expect(textOf(misnamed)).toMatch(/pathPrefix/);
    const status = await call(client(), 'crawl_status', { crawlId: 'c1', verbose: true });
    expect(status.isError).toBe(true);
    expect(textOf(status)).toMatch(/verbose/);
    // A tool that takes no arguments refuses one too: a filter it does not have listed everything.
    const sources = await call(client(), 'list_sources', { domain: '127.0.0.1' });
    expect(sources.isError).toBe(true);
    expect(textOf(sources)).toMatch(/domain/);
    // The tools' schemas say so to the client too.
    const { tools } = await client().listTools();
    for (const tool of tools) expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
  });

  it('a NUL character in an argument is a tool error saying so, not the database refusing its encoding', async () => {
    for (const [tool, args] of [
      ['search', { query: 'gaussian\u0000process' }],
      ['search', { query: 'gaussian', crawl: 'c\u0000' }],
      ['search', { query: 'gaussian', prefix: '/docs/\u0000' }],
      ['get_context', { question: 'gaussian\u0000' }],
      ['crawl_status', { crawlId: 'c\u0000' }],
    ] as const) {
      const result = await call(client(), tool, args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result), JSON.stringify(args)).toMatch(/must not contain a NUL character/);
    }
  });

  it('unknown and removed pages, a past-the-end offset and unknown crawls are tool errors with a reason', async () => {
    const unknown = await call(client(), 'fetch_page', { url: `${ORIGIN}/never/crawled.html` });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain(`no page stored for ${ORIGIN}/never/crawled.html`);
    const removed = await call(client(), 'fetch_page', { url: REMOVED_URL });
    expect(removed.isError).toBe(true);
    expect(textOf(removed)).toContain('removed from the corpus');
    const past = await call(client(), 'fetch_page', { url: BAYES_URL, offset: 100_000 });
    expect(past.isError).toBe(true);
    expect(textOf(past)).toContain('past the end');
    const crawl = await call(client(), 'crawl_status', { crawlId: 'no-such-crawl' });
    expect(crawl.isError).toBe(true);
    expect(textOf(crawl)).toContain('no crawl with id no-such-crawl');
  });

  it('list_sources and crawl_status answer from the store', async () => {
    const sources = await call(client(), 'list_sources', {});
    expect(sources.isError).toBeFalsy();
    expect(textOf(sources)).toContain(`${ORIGIN}: 3 pages`);
    expect(textOf(sources)).toContain(`${CRAWL_ID}: completed`);
    expect(sources.structuredContent).toMatchObject({
      origins: [{ origin: ORIGIN, pages: 3 }],
      originsTotal: 1,
      crawls: [{ crawlId: CRAWL_ID, status: 'completed', seeds: [`${ORIGIN}/`] }],
    });
    const status = await call(client(), 'crawl_status', { crawlId: CRAWL_ID });
    expect(status.isError).toBeFalsy();
    expect(textOf(status)).toContain(`Crawl ${CRAWL_ID}: completed`);
    expect(status.structuredContent).toMatchObject({
      crawlId: CRAWL_ID,
      status: 'completed',
      pagesIndexed: 3,
    });
  });

  it('get_context gives numbered passages with their URLs within the budget', async () => {
    const result = await call(client(), 'get_context', {
      question: 'How does the Gaussian process surrogate work?',
      budgetTokens: 300,
    });
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    expect(text).toContain('[1] ');
    expect(text).toContain(BAYES_URL);
    const structured = result.structuredContent as {
      usedTokens: number;
      budgetTokens: number;
      passages: unknown[];
    };
    expect(structured.budgetTokens).toBe(300);
    expect(structured.usedTokens).toBeLessThanOrEqual(300);
    expect(structured.passages.length).toBeGreaterThan(0);
  });
}
