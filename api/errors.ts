/**
 * Every failure leaves the API as `{ error, message, statusCode, requestId }`: 400 names the bad
 * parameter, 404 the missing thing, 503 the service that is down. Nothing reaches a client as a
 * stack trace; unexpected errors are logged with the request id and answered with a plain 500.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../db/database';
import { isConnectionError } from '../db/pg-database';

/**
 * Stable, machine-readable codes for refusals a client must tell apart from ordinary validation
 * errors; each is documented in api/README.md ("Errors"), which a test checks.
 */
export const API_ERROR_CODES = {
  /** The Host header names no host this API serves (DNS rebinding guard). */
  hostNotAllowed: 'host-not-allowed',
  /** A state-changing request came from a page of another origin (cross-site request guard). */
  originNotAllowed: 'origin-not-allowed',
  /** A state-changing request without a JSON body (forces browsers into a CORS preflight). */
  jsonBodyRequired: 'json-body-required',
} as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[keyof typeof API_ERROR_CODES];

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly statusCode: number,
    message: string,
    readonly code?: ApiErrorCode,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const notFound = (message: string) => new ApiError(404, message);

/** Temporal could not be reached (gRPC UNAVAILABLE or a missed deadline). */
export class TemporalUnavailableError extends Error {
  override readonly name = 'TemporalUnavailableError';
}

const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

/** True for errors (or their causes) that mean Temporal is down or unreachable, not a bad request. */
export function isTemporalUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if (current instanceof TemporalUnavailableError) return true;
    const code = (current as { code?: unknown }).code;
    if (code === GRPC_UNAVAILABLE || code === GRPC_DEADLINE_EXCEEDED) return true;
    if (
      /\b(UNAVAILABLE|DEADLINE_EXCEEDED)\b|Failed to connect|No connection established/.test(String(current))
    )
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  return error instanceof DatabaseUnavailableError || isConnectionError(error);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  421: 'Misdirected Request',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** AJV's first complaint, said with the parameter's name: `query parameter "k" must be <= 100`. */
function describeValidation(issues: readonly ValidationIssue[], context: string | undefined): string {
  const where =
    context === 'querystring' ? 'query parameter' : context === 'params' ? 'path parameter' : 'body field';
  const issue = issues[0];
  if (!issue) return 'invalid request';
  const field = issue.instancePath.replace(/^\//, '').replaceAll('/', '.');
  if (issue.keyword === 'required') {
    const missing = String(issue.params.missingProperty);
    const name = field ? `${field}.${missing}` : missing;
    return `missing ${where} "${name}"`;
  }
  if (issue.keyword === 'additionalProperties') {
    return `unknown ${where} "${String(issue.params.additionalProperty)}"`;
  }
  if (!field) return context === 'body' ? `request body ${issue.message ?? 'is invalid'}` : 'invalid request';
  const allowed = issue.keyword === 'enum' ? `: ${(issue.params.allowedValues as unknown[]).join(', ')}` : '';
  return `${where} "${field}" ${issue.message ?? 'is invalid'}${allowed}`;
}

function send(
  reply: FastifyReply,
  request: FastifyRequest,
  statusCode: number,
  message: string,
  code?: ApiErrorCode,
) {
  return reply.status(statusCode).send({
    error: STATUS_TEXT[statusCode] ?? 'Error',
    ...(code ? { code } : {}),
    message,
    statusCode,
    requestId: request.id,
  });
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      return send(reply, request, 400, describeValidation(error.validation, error.validationContext));
    }
    if (error instanceof ApiError) return send(reply, request, error.statusCode, error.message, error.code);
    // The client hung up mid-request: Node fails the request stream with ECONNRESET ("aborted"), the
    // code a lost database connection has too, which sent operators after a healthy store.
    if (
      request.raw.destroyed &&
      !(error instanceof DatabaseUnavailableError) &&
      error.code === 'ECONNRESET'
    ) {
      request.log.info({ err: error }, 'client closed the request');
      return send(reply, request, 400, 'the client closed the request');
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      return send(reply, request, 503, 'the database is unavailable; try again later');
    }
    if (isTemporalUnavailable(error)) {
      request.log.warn({ err: error }, 'Temporal unavailable');
      return send(reply, request, 503, 'Temporal is unavailable; try again later');
    }
    // Fastify's own client errors (malformed JSON, wrong content type, body too large).
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return send(reply, request, error.statusCode, error.message);
    }
    request.log.error({ err: error }, 'request failed');
    return send(
      reply,
      request,
      500,
      `internal error; the server log has the details (request id ${request.id})`,
    );
  });
  app.setNotFoundHandler((request, reply) =>
    send(reply, request, 404, `no route ${request.method} ${request.url.split('?')[0]}`),
  );
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any route or hook runs (a path with a
 * broken percent escape, a path parameter longer than any id). Left to Fastify, these answered in a
 * shape of their own, without the request id, in its header or its body.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return send(reply, request, 414, 'a path parameter is longer than any id this API serves');
  if (error.code === 'FST_ERR_BAD_URL')
    return send(reply, request, 400, 'the path has a malformed percent-escape (%XX)');
  request.log.error({ err: error }, 'request failed in routing');
  return send(
    reply,
    request,
    500,
    `internal error; the server log has the details (request id ${request.id})`,
  );
}

/** The error body every route documents for its failure statuses. */
export const errorSchema = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    code: { type: 'string', description: 'stable code of a refusal (api/README.md, "Errors")' },
    message: { type: 'string' },
    statusCode: { type: 'integer' },
    requestId: { type: 'string' },
  },
} as const;

/** Response schemas for the failures every route can answer with. */
export function errorResponses(...codes: number[]): Record<number, typeof errorSchema> {
  return Object.fromEntries([...codes, 503].map((code) => [code, errorSchema]));
}
