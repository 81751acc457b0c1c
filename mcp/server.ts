/**
 * The MCP server: the corpus as tools an agent (Claude Desktop, Cursor, VS Code, any MCP client)
 * can call. One factory for both transports — `gleaner mcp` connects it to stdio, the API builds one
 * per request for streamable HTTP at `/mcp`. Tools read the store; only `crawl_status` (for a
 * running crawl's live progress) and the crawl tools reach Temporal, through a client made on first
 * use, so search works while Temporal is down or absent.
 *
 * Every expected failure (a bad argument, an unknown page or crawl, no Temporal) comes back as a
 * tool result with `isError: true` and a sentence the model can act on; the SDK turns anything
 * thrown into the same shape, so nothing reaches the client as a protocol error it cannot read.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { canonicalizeUrl } from '../domain/url';
import { DEFAULT_BUDGET_TOKENS, MAX_BUDGET_TOKENS, MIN_BUDGET_TOKENS } from '../search/context';
import {
  EmbeddingModelMismatchError,
  MAX_K,
  MAX_QUERY_CHARS,
  type SearchOutcome,
  SearchParamsError,
} from '../search/hybrid-search';
import { listSources, readCrawlStatus, readPageByUrl } from './corpus-reads';
import { registerCrawlTools } from './crawl-tools';
import { type McpDeps, strictArguments, toolError } from './deps';
import { formatCrawlStatus, formatPage, formatPassages, formatSources, passagesOf } from './format';
import { liveProgress } from './live-progress';

export type { McpContext, McpDeps, McpSearch } from './deps';

export const DEFAULT_PAGE_CHARS = 20_000;
export const MAX_PAGE_CHARS = 100_000;
/** Search parameters by the tools' argument names, for error messages. */
const TOOL_ARGUMENTS: Readonly<Record<string, string>> = { pathPrefix: 'prefix', crawlId: 'crawl' };

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export function createMcpServer(deps: McpDeps): McpServer {
  const server = new McpServer(
    { name: 'gleaner', version: deps.version ?? '0.1.0' },
    {
      instructions:
        'gleaner serves a crawled web corpus. Use `search` to find passages and cite them as [n] with their URL; ' +
        'use `fetch_page` to read a whole page by URL; `get_context` for a ready-made, budgeted set of passages ' +
        'for a question; `list_sources` to see which sites and crawls are in the corpus.',
    },
  );

  server.registerTool(
    'search',
    {
      title: 'Search the corpus',
      description:
        'Search the crawled corpus by meaning and by exact words (hybrid vector + full-text search). Returns ranked ' +
        'passages, each numbered [n] with its page title, full URL, heading path and score; cite a passage as [n] ' +
        'with its URL. Narrow with `domain` (a host or origin), `prefix` (a URL path such as /docs/), `tags` or ' +
        '`crawl` (a crawl id from list_sources). Use fetch_page to read a whole page.',
      inputSchema: strictArguments({
        query: z
          .string()
          .min(1)
          .max(MAX_QUERY_CHARS)
          .describe('what to look for, in natural language or keywords'),
        k: z.number().int().min(1).max(MAX_K).optional().describe('passages to return, 1-100 (default 10)'),
        domain: z.string().min(1).optional().describe('only this host (and its subdomains) or origin'),
        prefix: z.string().min(1).optional().describe('only URLs under this path (/docs/) or URL prefix'),
        tags: z
          .array(z.string().min(1))
          .max(20)
          .optional()
          .describe('only pages carrying every one of these tags'),
        crawl: z.string().min(1).optional().describe('only pages last fetched by this crawl id'),
        includeFlagged: z
          .boolean()
          .optional()
          .describe(
            'also pages the quality gate flagged (soft-404, near-empty, template-only, wrong-language)',
          ),
        lang: z
          .array(z.string().min(1).max(35))
          .max(60)
          .optional()
          .describe('only pages in these languages (ISO 639-1, e.g. ["en"])'),
      }),
    },
    async ({ query, k, domain, prefix, tags, crawl, includeFlagged, lang }) => {
      let outcome: SearchOutcome;
      try {
        outcome = await deps.search({
          query,
          ...(k !== undefined ? { k } : {}),
          ...(domain !== undefined ? { domain } : {}),
          ...(prefix !== undefined ? { pathPrefix: prefix } : {}),
          ...(tags !== undefined ? { tags } : {}),
          ...(crawl !== undefined ? { crawlId: crawl } : {}),
          ...(includeFlagged ? { includeFlagged: true } : {}),
          ...(lang !== undefined ? { langs: lang } : {}),
        });
      } catch (error) {
        if (error instanceof SearchParamsError) return toolError(error.messageFor(TOOL_ARGUMENTS));
        if (error instanceof EmbeddingModelMismatchError) return toolError(error.message);
        throw error;
      }
      const passages = passagesOf(outcome.hits);
      return {
        content: [{ type: 'text', text: formatPassages(query, outcome, passages) }],
        structuredContent: { query, mode: outcome.mode, notes: outcome.notes, passages },
      };
    },
  );

  server.registerTool(
    'fetch_page',
    {
      title: 'Read a page',
      description:
        "Read one crawled page's Markdown by its URL, with its title, URL, fetch time, content hash, summary and " +
        'tags. Long pages come in parts of `maxChars` characters: the answer says which `offset` gets the next ' +
        'part. Only pages in the corpus can be read (find them with search); this does not fetch the live web.',
      inputSchema: strictArguments({
        url: z.string().min(1).max(8192).describe('the page URL, as search or list_sources show it'),
        offset: z.number().int().min(0).optional().describe('character offset to start at (default 0)'),
        maxChars: z
          .number()
          .int()
          .min(100)
          .max(MAX_PAGE_CHARS)
          .optional()
          .describe(`characters to return, 100-${MAX_PAGE_CHARS} (default ${DEFAULT_PAGE_CHARS})`),
      }),
    },
    async ({ url, offset = 0, maxChars = DEFAULT_PAGE_CHARS }) => {
      const canonical = canonicalizeUrl(url);
      if (!canonical) return toolError(`not a valid http(s) URL: ${url}`);
      const page = await readPageByUrl(deps.db, canonical);
      if (!page) {
        return toolError(
          `no page stored for ${canonical}: it was never crawled (or not under this URL). Use search or list_sources to find pages in the corpus.`,
        );
      }
      if (page.removedAt) {
        return toolError(
          `${page.url} was removed from the corpus at ${page.removedAt}${page.removedReason ? ` (${page.removedReason})` : ''}: the site no longer serves it`,
        );
      }
      const markdown = page.markdown ?? '';
      if (offset > 0 && offset >= markdown.length) {
        return toolError(
          `offset ${offset} is past the end of ${page.url}, whose Markdown has ${markdown.length} characters`,
        );
      }
      let end = Math.min(markdown.length, offset + maxChars);
      // Never between the halves of a surrogate pair (an emoji, a CJK extension character): cut
      // there, each part carried a lone half, which a client decoding it as UTF-8 cannot read.
      if (end < markdown.length && end > offset + 1 && isHighSurrogate(markdown.charCodeAt(end - 1)))
        end -= 1;
      const nextOffset = end < markdown.length ? end : null;
      const part = markdown.slice(offset, end);
      const { markdown: _whole, removedAt: _r, removedReason: _rr, ...metadata } = page;
      return {
        content: [{ type: 'text', text: formatPage(page, part, { offset, end, nextOffset }) }],
        structuredContent: {
          ...metadata,
          offset,
          nextOffset,
          totalChars: markdown.length,
          markdown: part,
        },
      };
    },
  );

  server.registerTool(
    'get_context',
    {
      title: 'Passages for a question',
      description:
        'Assemble the best passages from the corpus for a question, within a token budget: de-duplicated, ' +
        'neighbouring chunks of a page merged, a few passages per page at most, each numbered [n] with its URL and ' +
        'heading path. Put the result in your context and cite passages as [n] with their URL.',
      inputSchema: strictArguments({
        question: z.string().min(1).max(MAX_QUERY_CHARS).describe('the question to answer'),
        budgetTokens: z
          .number()
          .int()
          .min(MIN_BUDGET_TOKENS)
          .max(MAX_BUDGET_TOKENS)
          .optional()
          .describe(
            `most tokens of passages to return, ${MIN_BUDGET_TOKENS}-${MAX_BUDGET_TOKENS} (default ${DEFAULT_BUDGET_TOKENS})`,
          ),
      }),
    },
    async ({ question, budgetTokens }) => {
      if (!deps.context) return toolError('get_context is not available on this server; use search instead');
      try {
        const { text, structured } = await deps.context({
          question,
          ...(budgetTokens !== undefined ? { budgetTokens } : {}),
        });
        return { content: [{ type: 'text', text }], structuredContent: structured };
      } catch (error) {
        if (error instanceof SearchParamsError) return toolError(error.messageFor(TOOL_ARGUMENTS));
        if (error instanceof EmbeddingModelMismatchError) return toolError(error.message);
        throw error;
      }
    },
  );

  server.registerTool(
    'list_sources',
    {
      title: 'List sources',
      description:
        'List what the corpus holds: each origin (scheme://host:port) with its page count and last fetch time, and ' +
        'the newest crawls with their status, seeds, page counts and start and finish times. Use an origin as ' +
        "search's `domain`, a crawl id as search's `crawl` or crawl_status's `crawlId`.",
      // Strict like the others: `{"domain": "…"}` listed every source and said nothing.
      inputSchema: strictArguments({}),
    },
    async () => {
      const sources = await listSources(deps.db);
      return {
        content: [{ type: 'text', text: formatSources(sources) }],
        structuredContent: { ...sources },
      };
    },
  );

  server.registerTool(
    'crawl_status',
    {
      title: 'Crawl status',
      description:
        "A crawl's status (running, completed, failed, cancelled), its seeds, start and finish times and page counts; " +
        'for a finished crawl its summary (pages fetched, indexed, new, changed, removed, errors). Crawl ids come ' +
        'from list_sources.',
      inputSchema: strictArguments({
        crawlId: z
          .string()
          .min(1)
          .max(100)
          // No stored crawl id holds one, and the database refuses the character itself.
          .refine((id) => !id.includes('\u0000'), 'must not contain a NUL character')
          .describe('the crawl id'),
      }),
    },
    async ({ crawlId }) => {
      const stored = await readCrawlStatus(deps.db, crawlId);
      const live = stored?.finishedAt ? undefined : await liveProgress(deps.temporal, crawlId);
      if (!stored && !live?.progress) {
        return toolError(
          `no crawl with id ${crawlId}${live?.note ? ` (${live.note})` : ''}; list_sources lists the crawls`,
        );
      }
      return {
        content: [{ type: 'text', text: formatCrawlStatus(crawlId, stored, live) }],
        structuredContent: {
          // Not yet in the store (its first write is on the way): what Temporal says.
          ...(stored ?? { status: live?.workflowStatus?.toLowerCase() ?? 'unknown' }),
          crawlId,
          progress: live?.progress ?? null,
          ...(live?.note ? { note: live.note } : {}),
        },
      };
    },
  );

  if (deps.allowCrawl) registerCrawlTools(server, deps);
  return server;
}
