/**
 * The error replies JSON-RPC 2.0 requires for input that never becomes a request: -32700 for text
 * that is not JSON, -32600 for JSON that is not a JSON-RPC message. Both transports send them
 * themselves, stdio (stdio-transport.ts) and streamable HTTP (api/routes/mcp-routes.ts): on stdio
 * the SDK answers neither, and over HTTP Fastify parses the body before the SDK could, while the
 * SDK calls JSON that is no JSON-RPC message a parse error.
 */
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * A JSON-RPC error reply. Its own type because `id` may be null, which the SDK's message types
 * leave out: the spec's answer when the request's id could not be read.
 */
export interface JsonRpcErrorReply {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

export function parseErrorReply(detail: string): JsonRpcErrorReply {
  return {
    jsonrpc: '2.0',
    id: null,
    error: { code: ErrorCode.ParseError, message: `Parse error: ${detail}` },
  };
}

/** The -32600 reply `value` deserves, or undefined when it is a JSON-RPC message the SDK accepts. */
export function invalidRequestReply(value: unknown): JsonRpcErrorReply | undefined {
  if (JSONRPCMessageSchema.safeParse(value).success) return undefined;
  // The schema is a union, so its issue says only "Invalid input": the message says what was expected.
  return {
    jsonrpc: '2.0',
    id: readableId(value),
    error: {
      code: ErrorCode.InvalidRequest,
      message: 'Invalid Request: not a JSON-RPC 2.0 request, notification or response',
    },
  };
}

/**
 * The requests createMcpServer answers, by method. Others are left to the SDK, which answers
 * -32601 (Method not found) before it reads their params.
 */
const SERVED_REQUESTS = new Map(
  [InitializeRequestSchema, PingRequestSchema, ListToolsRequestSchema, CallToolRequestSchema].map(
    (schema) => [schema.shape.method.value as string, schema],
  ),
);

/**
 * The -32602 reply a request with params of the wrong shape deserves (`tools/call` without params, or
 * with `arguments` that are no object), or undefined when its params fit. The SDK checks them too,
 * but answers a mismatch with -32603 (Internal error) and a dump of its schema library's issues, as
 * if the server had failed.
 */
export function invalidParamsReply(value: unknown): JsonRpcErrorReply | undefined {
  if (typeof value !== 'object' || value === null || !('id' in value) || !('method' in value))
    return undefined;
  const schema = SERVED_REQUESTS.get(String(value.method));
  const issue = schema?.safeParse(value).error?.issues[0];
  if (!issue) return undefined;
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return {
    jsonrpc: '2.0',
    id: readableId(value),
    error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${where}${issue.message}` },
  };
}

/**
 * True for something shaped as a response (no method; a result or an error). An invalid one gets
 * no reply: answering it could start two peers answering each other's error replies forever (the
 * SDK refuses `"id": null` in a response, and every Parse error reply carries one).
 */
export function looksLikeResponse(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return !('method' in value) && ('result' in value || 'error' in value);
}

/** The request's id when it has one of the types JSON-RPC allows, so the client can match the reply. */
function readableId(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}
