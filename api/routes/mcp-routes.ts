/**
 * `POST /mcp`: the MCP server (mcp/server.ts) over streamable HTTP, stateless: each request gets a
 * fresh server and transport, answers in JSON, and keeps nothing, so any API replica can answer
 * any request. It is a `control` route — the API token (or, with none set, loopback clients only)
 * and the Host and Origin rules of every state-changing route — because with
 * GLEANER_MCP_ALLOW_CRAWL its tools start crawls. `GET` and `DELETE /mcp` (server-sent streams and
 * session ends) mean nothing without sessions: 405.
 *
 * A body that is not JSON, or not a JSON-RPC message, is answered here in JSON-RPC's words
 * (-32700, -32600; mcp/json-rpc-errors.ts), as `gleaner mcp` answers it on stdio: Fastify parses the
 * body before the SDK sees it, so left alone a malformed one got the API's own 400 body, which an
 * MCP client cannot read, and the SDK calls JSON that is no JSON-RPC message a parse error.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Client } from '@temporalio/client';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { mcpContext } from '../../mcp/context';
import {
  invalidParamsReply,
  invalidRequestReply,
  type JsonRpcErrorReply,
  parseErrorReply,
} from '../../mcp/json-rpc-errors';
import { createMcpServer } from '../../mcp/server';
import { ApiError, errorSchema } from '../errors';
import type { SearchFunction } from '../search-service';
import { route } from './route-options';

export interface McpRouteDeps {
  db: Database;
  search?: SearchFunction;
  temporal: () => Promise<Client>;
  /** Offer start_crawl and recrawl. @default GLEANER_MCP_ALLOW_CRAWL is 1, true or yes */
  allowCrawl?: boolean;
}

/** Fastify's refusals of a JSON body it could not parse: to the client, a JSON-RPC Parse error. */
const UNPARSED_BODY = new Set(['FST_ERR_CTP_INVALID_JSON_BODY', 'FST_ERR_CTP_EMPTY_JSON_BODY']);

const jsonRpcErrorSchema = {
  type: 'object',
  description: 'a JSON-RPC 2.0 error reply',
  required: ['jsonrpc', 'id', 'error'],
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { description: "the request's id, or null when it could not be read" },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
  },
} as const;

export function allowCrawlFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['1', 'true', 'yes'].includes(env.GLEANER_MCP_ALLOW_CRAWL?.trim().toLowerCase() ?? '');
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  const allowCrawl = deps.allowCrawl ?? allowCrawlFromEnv();
  const search = deps.search;

  app.post(
    '/mcp',
    {
      ...route({
        access: 'control',
        summary:
          'MCP (Model Context Protocol) over streamable HTTP: search, fetch_page, get_context, list_sources, crawl_status',
        tags: ['search'],
        errors: [400, 406, 415],
        // The API's own refusals (a bad Content-Length) keep the API's error body.
        response: { 400: { anyOf: [jsonRpcErrorSchema, errorSchema] } },
      }),
      errorHandler: (error: FastifyError, _request, reply) => {
        if (error.code && UNPARSED_BODY.has(error.code))
          return reply.code(400).send(parseErrorReply(error.message));
        // Thrown on to the API's error handler (api/errors.ts), which answers everything else.
        throw error;
      },
    },
    async (request, reply) => {
      const invalid = invalidRequest(request.body);
      if (invalid) return reply.code(400).send(invalid);
      // As the SDK answers a request that fails (200, the error in the body), but as -32602, not its
      // -32603 with a schema dump. A batch's members are left to the SDK.
      const badParams = Array.isArray(request.body) ? undefined : invalidParamsReply(request.body);
      if (badParams) return reply.code(200).send(badParams);
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
      // Hijacked, the reply skips the onSend hook that sets it on every other response.
      reply.raw.setHeader('x-request-id', request.id);
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

/**
 * The -32600 reply a body deserves; a batch with a bad member is refused whole, id null, and so is an
 * empty one (JSON-RPC 2.0 says so; the SDK answered 202 as if it had taken notifications).
 */
function invalidRequest(body: unknown): JsonRpcErrorReply | undefined {
  if (!Array.isArray(body)) return invalidRequestReply(body);
  if (body.length === 0) return invalidRequestReply(body);
  const refused = body.map((message) => invalidRequestReply(message)).find((reply) => reply !== undefined);
  return refused && { ...refused, id: null };
}
