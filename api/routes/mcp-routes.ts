/**
 * `POST /mcp`: the MCP server (mcp/server.ts) over streamable HTTP, stateless: each request gets a
 * fresh server and transport, answers in JSON, and keeps nothing, so any API replica can answer
 * any request. It is a `control` route — the API token (or, with none set, loopback clients only)
 * and the Host and Origin rules of every state-changing route — because with
 * GLEANER_MCP_ALLOW_CRAWL its tools start crawls. `GET` and `DELETE /mcp` (server-sent streams and
 * session ends) mean nothing without sessions: 405.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { mcpContext } from '../../mcp/context';
import { createMcpServer } from '../../mcp/server';
import { ApiError } from '../errors';
import type { SearchFunction } from '../search-service';
import { route } from './route-options';

export interface McpRouteDeps {
  db: Database;
  search?: SearchFunction;
  temporal: () => Promise<Client>;
  /** Offer start_crawl and recrawl. @default GLEANER_MCP_ALLOW_CRAWL is 1, true or yes */
  allowCrawl?: boolean;
}

export function allowCrawlFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['1', 'true', 'yes'].includes(env.GLEANER_MCP_ALLOW_CRAWL?.trim().toLowerCase() ?? '');
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  const allowCrawl = deps.allowCrawl ?? allowCrawlFromEnv();
  const search = deps.search;

  app.post(
    '/mcp',
    route({
      access: 'control',
      summary:
        'MCP (Model Context Protocol) over streamable HTTP: search, fetch_page, get_context, list_sources, crawl_status',
      tags: ['search'],
      errors: [400, 406, 415],
    }),
    async (request, reply) => {
      const server = createMcpServer({
        db: deps.db,
        search: async (params) => {
          if (!search) throw new Error('search is not configured on this API');
          return search(params);
        },
        // The search service's own context assembly: one query embedder per API process.
        ...(search?.context ? { context: mcpContext(search.context) } : {}),
        temporal: deps.temporal,
        allowCrawl,
      });
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      ...route({
        access: 'control',
        summary: 'Not served: the MCP endpoint is stateless (no server-sent stream, no session to end)',
        tags: ['search'],
        errors: [405],
      }),
      handler: async (_request, reply) => {
        reply.header('allow', 'POST');
        throw new ApiError(405, 'this MCP endpoint is stateless: POST JSON-RPC requests to /mcp');
      },
    });
  }
}
