/**
 * The error replies JSON-RPC 2.0 requires for input that never becomes a request: -32700 for text
 * that is not JSON, -32600 for JSON that is not a JSON-RPC message. Both transports send them
 * themselves, stdio (stdio-transport.ts) and streamable HTTP (api/routes/mcp-routes.ts): on stdio
 * the SDK answers neither, and over HTTP Fastify parses the body before the SDK could, while the
 * SDK calls JSON that is no JSON-RPC message a parse error.
 */
import { ErrorCode, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

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
