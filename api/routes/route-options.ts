/**
 * The options every route declares, built in one place: its access level (api/auth.ts), its
 * OpenAPI summary and tags, its input schemas and answers, and the error answers that follow from
 * its access — guarded routes may answer 401 and 403, `control` routes name the bearer scheme, and
 * every route may answer 503 (errorResponses) — so a new route cannot forget one of them.
 */
import type { FastifySchema } from 'fastify';
import type { Access } from '../auth';
import { errorResponses } from '../errors';

export interface RouteSpec extends Omit<FastifySchema, 'response'> {
  access: Access;
  summary: string;
  tags: string[];
  /** The answers on success, by status. */
  response?: Record<number, unknown>;
  /** Failure statuses this route answers with, besides 401/403 (from its access) and 503. */
  errors?: number[];
}

export function route({ access, errors = [], response = {}, ...schema }: RouteSpec) {
  const guarded = access === 'open' ? [] : [401, 403];
  const failures = [...new Set([...errors, ...guarded])].sort((a, b) => a - b);
  return {
    config: { access },
    schema: {
      ...schema,
      ...(access === 'control' ? { security: [{ bearer: [] }] } : {}),
      response: { ...errorResponses(...failures), ...response },
    },
  };
}
