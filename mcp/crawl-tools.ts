/**
 * `start_crawl` and `recrawl`: registered only when the operator allows them (`gleaner mcp
 * --allow-crawl`; over HTTP also behind the API token), because they make the machine fetch from the
 * web on a model's say-so. Both go through the one crawl start (`infra/start-crawl.ts`) with a spec
 * built as `gleaner crawl` and `POST /crawls` build theirs, so the same checks and limits apply.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { buildCrawlSpec, type CrawlRequest } from '../domain/crawl-request';
import { CRAWL_ID_PATTERN, type CrawlSpec, InvalidCrawlSpecError } from '../domain/crawl-spec';
import { CrawlIdTakenError, newCrawlId, startCrawl } from '../infra/start-crawl';
import { readCrawlSpec } from './corpus-reads';
import { type McpDeps, strictArguments, toolError } from './deps';
import { TEMPORAL_DEADLINE_MS } from './live-progress';

const crawlId = z
  .string()
  .regex(new RegExp(CRAWL_ID_PATTERN), 'letters, digits, dot, dash and underscore')
  .max(100);

export function registerCrawlTools(server: McpServer, deps: McpDeps): void {
  const start = async (request: CrawlRequest, id: string) => {
    let spec: CrawlSpec;
    const allowHosts = [...new Set([...(request.allowHosts ?? []), ...(deps.crawlAllowHosts ?? [])])];
    try {
      spec = buildCrawlSpec({ ...request, allowHosts }, id);
    } catch (error) {
      if (error instanceof InvalidCrawlSpecError)
        return toolError(`cannot start this crawl: ${error.problems.join('; ')}`);
      throw error;
    }
    if (!deps.temporal) {
      return toolError(
        'no Temporal to start crawls with: run `gleaner dev` (or set TEMPORAL_ADDRESS) and restart this MCP server',
      );
    }
    let client: Client;
    try {
      client = await deps.temporal();
    } catch (error) {
      return toolError(
        `cannot reach Temporal to start the crawl: ${(error as Error).message.split('\n')[0]}`,
      );
    }
    try {
      const started = await client.connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS * 3, () =>
        startCrawl(client, deps.db, { spec, resumeOpen: false }),
      );
      return {
        content: [
          {
            type: 'text' as const,
            text: `Started crawl ${started.crawlId} of ${spec.seeds.join(' ')} (at most ${spec.maxPages} pages). Follow it with crawl_status {"crawlId": "${started.crawlId}"}.`,
          },
        ],
        structuredContent: { crawlId: started.crawlId, workflowId: started.workflowId, seeds: spec.seeds },
      };
    } catch (error) {
      if (error instanceof CrawlIdTakenError) return toolError(error.message);
      throw error;
    }
  };

  server.registerTool(
    'start_crawl',
    {
      title: 'Start a crawl',
      description:
        'Crawl a site into the corpus (politely: robots.txt, one request at a time per site). Give the start URLs; ' +
        'by default the crawl stays on their origin. Returns the crawl id at once; follow it with crawl_status and ' +
        'search the new pages as they are indexed.',
      inputSchema: strictArguments({
        urls: z.array(z.string().min(1)).min(1).max(100).describe('absolute http(s) URLs to start from'),
        crawlId: crawlId.optional().describe('an id of your choosing (default: time-based)'),
        maxPages: z.number().int().min(1).max(100_000).optional().describe('page budget (default 1000)'),
        maxDepth: z.number().int().min(0).max(100).optional().describe('link hops from a seed (default 20)'),
        scope: z.enum(['same-origin', 'same-site', 'domains']).optional(),
        domains: z
          .array(z.string().min(1))
          .max(100)
          .optional()
          .describe("hosts in scope with scope 'domains'"),
        includePrefixes: z
          .array(z.string().min(1))
          .max(100)
          .optional()
          .describe('only URLs under these prefixes'),
        exclude: z.array(z.string().min(1)).max(100).optional().describe('globs or /regex/ of URLs to skip'),
      }),
    },
    async ({ urls, crawlId: id, ...rest }) => start({ ...rest, seeds: urls }, id ?? newCrawlId()),
  );

  server.registerTool(
    'recrawl',
    {
      title: 'Recrawl',
      description:
        'Crawl again what an earlier crawl covered (same seeds and scope, a new crawl id): unchanged pages are ' +
        'skipped cheaply, changed ones re-indexed, removed ones leave search. `onlyDue` revisits only pages due ' +
        'by their learned change interval.',
      inputSchema: strictArguments({
        crawlId: z.string().min(1).max(100).describe('the earlier crawl to repeat (from list_sources)'),
        onlyDue: z.boolean().optional().describe('only pages due for a revisit (default false)'),
      }),
    },
    async ({ crawlId: previous, onlyDue }) => {
      const spec = await readCrawlSpec(deps.db, previous);
      if (!spec) return toolError(`no crawl with id ${previous}; list_sources lists the crawls`);
      const { crawlId: _old, ...request } = spec;
      return start(
        { ...(request as CrawlRequest), ...(onlyDue !== undefined ? { onlyDue } : {}) },
        newCrawlId(),
      );
    },
  );
}
