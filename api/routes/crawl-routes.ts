/**
 * Crawls: start (`POST /crawls`, the same spec and workflow as `gleaner crawl`), list (from the
 * `crawls` table), progress (`GET /crawls/:id`, the workflow's `progress` query while it runs,
 * the stored summary once it has finished) and operator control (pause, resume, cancel).
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { buildCrawlSpec } from '../../domain/crawl-request';
import {
  CONTENT_TYPES,
  type ContentTypeName,
  CRAWL_ID_PATTERN,
  type CrawlSpec,
  InvalidCrawlSpecError,
} from '../../domain/crawl-spec';
import { crawlWorkflowId } from '../../domain/temporal-names';
import { WEBHOOK_SECRET_ENV } from '../../domain/webhook-events';
import { crawlWorkflowState } from '../../infra/crawl-workflow-state';
import { CrawlIdTakenError, newCrawlId, startCrawl } from '../../infra/start-crawl';
import { type ControlCommand, controlSignal } from '../../workflows/messages';
import { ApiError, badRequest, notFound } from '../errors';
import { queryOrBody } from '../request-validation';
import { parseOrigin } from './graph-routes';
import { route } from './route-options';

/** Bound on each Temporal call, so a Temporal outage answers 503 promptly instead of hanging. */
const TEMPORAL_DEADLINE_MS = 5_000;

const CRAWL_ID = { type: 'string', minLength: 1, maxLength: 100, pattern: CRAWL_ID_PATTERN } as const;
const stringList = { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 1000 } as const;

export interface StartCrawlBody {
  seeds: string[];
  crawlId?: string;
  maxPages?: number;
  maxDepth?: number;
  scope?: 'same-origin' | 'same-site' | 'domains';
  domains?: string[];
  includePrefixes?: string[];
  exclude?: string[];
  delayMs?: number;
  maxRequestsPerSecond?: number;
  perOriginConcurrency?: number;
  userAgent?: string;
  allowHosts?: string[];
  notify?: string[];
  maxBodyBytes?: number;
  contentTypes?: ContentTypeName[];
  lang?: string[];
  soft404Probe?: boolean;
  render?: 'auto' | 'never' | 'always';
  onlyDue?: boolean;
}

/** Body fields that shape the crawl spec, shared with the schedule routes (named as in the spec). */
export const CRAWL_SPEC_PROPERTIES = {
  maxPages: { type: 'integer', minimum: 1, description: 'default 1000' },
  maxDepth: { type: 'integer', minimum: 0, description: 'default 20' },
  scope: { type: 'string', enum: ['same-origin', 'same-site', 'domains'] },
  domains: { ...stringList, description: "hosts in scope with scope 'domains'" },
  includePrefixes: stringList,
  exclude: { ...stringList, description: 'globs or /regex/' },
  delayMs: { type: 'integer', minimum: 0, description: 'minimum gap per origin (default 1000)' },
  maxRequestsPerSecond: { type: 'number', minimum: 0 },
  render: {
    type: 'string',
    enum: ['auto', 'never', 'always'],
    description: 'render pages in headless Chromium (default auto: when the HTML needs JavaScript)',
  },
  perOriginConcurrency: {
    type: 'integer',
    minimum: 1,
    maximum: 16,
    description: 'requests in flight per origin without a robots Crawl-delay (default 1)',
  },
  userAgent: { type: 'string', minLength: 1, maxLength: 500 },
  allowHosts: { ...stringList, description: 'hosts the SSRF guard may fetch on private addresses' },
  notify: {
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: 2048 },
    maxItems: 10,
    description:
      'http(s) receivers of signed webhooks (crawl.started, pages.changed, crawl.completed; Gleaner-Signature: HMAC-SHA256 with GLEANER_WEBHOOK_SECRET, which the workers hold)',
  },
  maxBodyBytes: { type: 'integer', minimum: 1 },
  contentTypes: {
    type: 'array',
    items: { type: 'string', enum: CONTENT_TYPES },
    minItems: 1,
    description: 'kinds of response indexed: html, pdf, markdown, text, docx (default all)',
  },
  lang: {
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: 35 },
    maxItems: 60,
    description:
      "languages the corpus keeps, ISO 639-1 (['en', 'de']); pages in others are flagged wrong-language (default all)",
  },
  onlyDue: {
    type: 'boolean',
    description: 'recrawl only known pages due by their learned revisit interval (default false)',
  },
  soft404Probe: {
    type: 'boolean',
    description:
      'ask each origin once for a path that cannot exist and flag pages that read like its answer as soft-404 (default false)',
  },
} as const;

const START_CRAWL_PROPERTIES = {
  seeds: { ...stringList, minItems: 1, description: 'absolute http(s) URLs to start from' },
  crawlId: { ...CRAWL_ID, description: 'default: time-based' },
} as const;

/** A crawl request the spec builder refused, as a 400 naming each body field (spec names are body names). */
export function badRequestOfSpec(error: InvalidCrawlSpecError): ApiError {
  return badRequest(
    error.issues
      .map(({ field, message }) => (field ? `body field "${field}": ${message}` : `request body: ${message}`))
      .join('; '),
  );
}

/**
 * Refuses receivers this process would have to sign for without a key. When the API's own workers
 * deliver webhooks (the embedded default) and GLEANER_WEBHOOK_SECRET is unset here, every delivery
 * waits for a secret this process will never get: the crawl was accepted with 202 and the receiver
 * heard nothing for three days. `gleaner crawl --notify` refuses the same case.
 */
export function refuseUnsignedNotify(notify: readonly string[], deliversWebhooks: boolean): void {
  if (!deliversWebhooks || notify.length === 0 || process.env[WEBHOOK_SECRET_ENV]) return;
  throw badRequest(
    `body field "notify": set ${WEBHOOK_SECRET_ENV} where this API runs and restart it: its own workers ` +
      'deliver the webhooks, which are always signed (HMAC-SHA256)',
  );
}

/** The crawl spec a body asks for: the body is a crawl request in the spec's own names. */
export function specFromBody(body: StartCrawlBody): CrawlSpec {
  try {
    return buildCrawlSpec(body, body.crawlId ?? newCrawlId());
  } catch (error) {
    if (error instanceof InvalidCrawlSpecError) throw badRequestOfSpec(error);
    throw error;
  }
}

interface CrawlRow {
  id: string;
  status: string;
  spec: { seeds?: string[] } | null;
  started_at: Date;
  finished_at: Date | null;
  summary: Record<string, unknown> | null;
}

const crawlRecordSchema = {
  type: 'object',
  properties: {
    crawlId: { type: 'string' },
    status: { type: 'string' },
    seeds: { type: 'array', items: { type: 'string' } },
    startedAt: { type: 'string' },
    finishedAt: { type: ['string', 'null'] },
    summary: { type: ['object', 'null'], additionalProperties: true },
  },
} as const;

function toRecord(row: CrawlRow) {
  return {
    crawlId: row.id,
    status: row.status,
    seeds: row.spec?.seeds ?? [],
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at ? new Date(row.finished_at).toISOString() : null,
    summary: row.summary,
  };
}

interface ControlParameters {
  origin?: string;
  reason?: string;
}

/** What pause, resume and cancel take, in the query string or the body. */
const CONTROL_PARAMETERS = {
  origin: { type: 'string', minLength: 1, description: 'only this origin (scheme://host:port)' },
  reason: { type: 'string', minLength: 1, maxLength: 1000, description: 'recorded with a cancel' },
} as const;

export interface CrawlRouteDeps {
  db: Database;
  temporal: () => Promise<Client>;
  /** This process's workers deliver webhooks (refuseUnsignedNotify). @default false */
  deliversWebhooks?: boolean;
}

export function registerCrawlRoutes(
  app: FastifyInstance,
  { db, temporal, deliversWebhooks = false }: CrawlRouteDeps,
): void {
  const withTemporal = async <T>(fn: (client: Client) => Promise<T>): Promise<T> => {
    const client = await temporal();
    return client.connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () => fn(client));
  };

  app.post<{ Body: StartCrawlBody }>(
    '/crawls',
    route({
      access: 'control',
      summary: 'Start a crawl (crawlWorkflow) with the same spec as `gleaner crawl`',
      tags: ['crawls'],
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['seeds'],
        properties: { ...START_CRAWL_PROPERTIES, ...CRAWL_SPEC_PROPERTIES },
      },
      response: {
        202: {
          type: 'object',
          properties: {
            crawlId: { type: 'string' },
            workflowId: { type: 'string' },
            status: { type: 'string' },
            progressUrl: { type: 'string' },
          },
        },
      },
      errors: [400, 409],
    }),
    async (request, reply) => {
      const spec = specFromBody(request.body);
      refuseUnsignedNotify(spec.notify, deliversWebhooks);
      // A finished crawl's id is refused, never started again over its record.
      const { workflowId } = await withTemporal((client) =>
        startCrawl(client, db, { spec, resumeOpen: false }),
      ).catch((error: unknown) => {
        if (error instanceof CrawlIdTakenError) throw new ApiError(409, error.message);
        throw error;
      });
      request.log.info({ crawlId: spec.crawlId, seeds: spec.seeds.length }, 'crawl started');
      const progressUrl = `/crawls/${encodeURIComponent(spec.crawlId)}`;
      return reply
        .status(202)
        .header('location', progressUrl)
        .send({ crawlId: spec.crawlId, workflowId, status: 'started', progressUrl });
    },
  );

  app.get<{ Querystring: { limit: number; offset: number; status?: string } }>(
    '/crawls',
    route({
      access: 'read',
      summary: 'Crawls recorded in the database, newest first',
      tags: ['crawls'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
          offset: { type: 'integer', minimum: 0, default: 0 },
          status: { type: 'string', enum: ['running', 'completed', 'failed', 'cancelled'] },
        },
      },
      response: {
        200: {
          type: 'object',
          properties: { total: { type: 'integer' }, crawls: { type: 'array', items: crawlRecordSchema } },
        },
      },
      errors: [400],
    }),
    async (request) => {
      const { limit, offset, status } = request.query;
      const { rows } = await db.query<CrawlRow>(
        `SELECT id, status, spec, started_at, finished_at, summary FROM crawls
         WHERE ($1::text IS NULL OR status = $1)
         ORDER BY started_at DESC, id LIMIT $2 OFFSET $3`,
        [status ?? null, limit, offset],
      );
      const total = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM crawls WHERE ($1::text IS NULL OR status = $1)',
        [status ?? null],
      );
      return { total: total.rows[0]?.n ?? 0, crawls: rows.map(toRecord) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/crawls/:id',
    route({
      access: 'read',
      summary: "A crawl's live progress (workflow query) or, once finished, its stored summary",
      tags: ['crawls'],
      params: { type: 'object', required: ['id'], properties: { id: CRAWL_ID } },
      response: {
        200: {
          type: 'object',
          properties: {
            ...crawlRecordSchema.properties,
            workflowId: { type: 'string' },
            workflowStatus: { type: ['string', 'null'], description: 'Temporal execution status' },
            progress: { type: ['object', 'null'], additionalProperties: true },
          },
        },
      },
      errors: [400, 404],
    }),
    async (request) => {
      const { id } = request.params;
      const workflowId = crawlWorkflowId(id);
      const { rows } = await db.query<CrawlRow>(
        'SELECT id, status, spec, started_at, finished_at, summary FROM crawls WHERE id = $1',
        [id],
      );
      const stored = rows[0];
      // A finished crawl's summary is in Postgres: no need for Temporal (or its retention).
      if (stored?.finished_at) {
        return { ...toRecord(stored), workflowId, workflowStatus: null, progress: null };
      }
      const live = await withTemporal((client) => crawlWorkflowState(client, id)).catch((error: unknown) => {
        if (error instanceof WorkflowNotFoundError) return undefined;
        throw error;
      });
      if (!live) {
        if (stored) return { ...toRecord(stored), workflowId, workflowStatus: null, progress: null };
        throw notFound(`no crawl with id ${id}`);
      }
      const base = stored
        ? toRecord(stored)
        : {
            crawlId: id,
            status: 'running',
            seeds: live.progress?.spec.seeds ?? [],
            startedAt: live.startTime.toISOString(),
            finishedAt: null,
            summary: null,
          };
      // Closed without writing a summary (terminated, timed out): say what Temporal says.
      const status = live.workflowStatus === 'RUNNING' ? 'running' : live.workflowStatus.toLowerCase();
      return { ...base, status, workflowId, workflowStatus: live.workflowStatus, progress: live.progress };
    },
  );

  app.post<{
    Params: { id: string; action: ControlCommand['action'] };
    Querystring: ControlParameters;
    Body: ControlParameters | null;
  }>(
    '/crawls/:id/:action',
    route({
      access: 'control',
      summary: 'Pause, resume or cancel a running crawl, or one of its origins',
      tags: ['crawls'],
      params: {
        type: 'object',
        required: ['id', 'action'],
        properties: { id: CRAWL_ID, action: { type: 'string', enum: ['pause', 'resume', 'cancel'] } },
      },
      querystring: { type: 'object', additionalProperties: false, properties: CONTROL_PARAMETERS },
      body: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: CONTROL_PARAMETERS,
        description: 'send {}; origin and reason may be given here instead of in the query string',
      },
      response: {
        202: {
          type: 'object',
          properties: {
            crawlId: { type: 'string' },
            action: { type: 'string' },
            origin: { type: 'string' },
          },
        },
      },
      errors: [400, 404],
    }),
    async (request, reply) => {
      const { id, action } = request.params;
      const givenOrigin = queryOrBody('origin', request.query.origin, request.body?.origin);
      const reason = queryOrBody('reason', request.query.reason, request.body?.reason);
      const where = request.query.origin !== undefined ? 'query parameter "origin"' : 'body field "origin"';
      const origin = givenOrigin !== undefined ? parseOrigin(givenOrigin, where) : undefined;
      const command: ControlCommand = {
        action,
        ...(origin ? { origin } : {}),
        ...(reason ? { reason } : {}),
      };
      await withTemporal((client) =>
        client.workflow.getHandle(crawlWorkflowId(id)).signal(controlSignal, command),
      ).catch((error: unknown) => {
        if (error instanceof WorkflowNotFoundError) throw notFound(`no running crawl with id ${id}`);
        throw error;
      });
      return reply.status(202).send({ crawlId: id, action, ...(origin ? { origin } : {}) });
    },
  );
}
