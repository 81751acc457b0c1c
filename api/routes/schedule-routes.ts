/**
 * Recrawl schedules over HTTP: the same Temporal Schedules as `gleaner schedule` (create, list,
 * describe, pause, unpause, trigger, delete), with the crawl spec built exactly as `POST /crawls`
 * builds it. Creating and steering need the same rights as starting crawls; reading is a read.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { buildScheduledCrawlSpec } from '../../domain/crawl-request';
import { InvalidCrawlSpecError } from '../../domain/crawl-spec';
import {
  buildScheduleRequest,
  InvalidScheduleError,
  OVERLAP_NAMES,
  type OverlapName,
  SCHEDULE_ID_PATTERN,
  type ScheduleRequestInput,
} from '../../domain/schedule-spec';
import {
  type CreateScheduleRequest,
  createCrawlSchedule,
  deleteCrawlSchedule,
  describeCrawlSchedule,
  listCrawlSchedules,
  pauseCrawlSchedule,
  ScheduleExists,
  ScheduleNotFound,
  TriggerSkipped,
  unpauseCrawlSchedule,
} from '../../infra/crawl-schedules';
import { CrawlIdTakenError, startCrawl } from '../../infra/start-crawl';
import { ApiError, badRequest, notFound } from '../errors';
import { queryOrBody } from '../request-validation';
import {
  badRequestOfSpec,
  CRAWL_SPEC_PROPERTIES,
  refuseUnsignedNotify,
  type StartCrawlBody,
} from './crawl-routes';
import { route } from './route-options';

/** Bound on each Temporal call; a trigger waits for its crawl to exist, so it gets longer. */
const TEMPORAL_DEADLINE_MS = 5_000;
const TRIGGER_DEADLINE_MS = 30_000;

const SCHEDULE_ID = { type: 'string', pattern: SCHEDULE_ID_PATTERN } as const;
const DURATION = {
  type: 'string',
  minLength: 1,
  maxLength: 40,
  description: 'e.g. 30s, 15m, 6h, 1d, 1h30m',
} as const;
const OVERLAP = { type: 'string', enum: OVERLAP_NAMES } as const;

type CreateScheduleBody = Omit<StartCrawlBody, 'crawlId'> & ScheduleRequestInput;

const runSchema = {
  type: 'object',
  properties: {
    crawlId: { type: 'string' },
    workflowId: { type: 'string' },
    scheduledAt: { type: 'string' },
    startedAt: { type: 'string' },
  },
} as const;

const viewProperties = {
  scheduleId: { type: 'string' },
  cadence: { type: 'string', description: '"every 1d" or "cron 0 3 * * *"' },
  every: { type: 'string' },
  cron: { type: 'string' },
  seeds: { type: 'array', items: { type: 'string' } },
  paused: { type: 'boolean' },
  note: { type: 'string' },
  nextRuns: { type: 'array', items: { type: 'string' } },
  recentRuns: { type: 'array', items: runSchema },
} as const;

const detailsSchema = {
  type: 'object',
  properties: {
    ...viewProperties,
    overlap: { type: 'string' },
    jitterMs: { type: 'integer' },
    catchupWindowMs: { type: 'integer' },
    runningCrawls: { type: 'array', items: { type: 'string' } },
    actionsTaken: { type: 'integer' },
    skippedOverlap: { type: 'integer' },
    missedCatchupWindow: { type: 'integer' },
    createdAt: { type: 'string' },
    crawl: { type: 'object', additionalProperties: true, description: 'the crawl spec each fire starts' },
  },
} as const;

const idParams = { type: 'object', required: ['id'], properties: { id: SCHEDULE_ID } } as const;
const noteBody = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: { note: { type: 'string', minLength: 1, maxLength: 1000 } },
} as const;

/** The schedule layer's typed failures, as HTTP statuses. */
function toApiError(error: unknown): never {
  if (error instanceof InvalidScheduleError) throw badRequest(error.message);
  if (error instanceof InvalidCrawlSpecError) throw badRequestOfSpec(error);
  if (error instanceof ScheduleNotFound) throw notFound(error.message);
  if (
    error instanceof ScheduleExists ||
    error instanceof TriggerSkipped ||
    error instanceof CrawlIdTakenError
  )
    throw new ApiError(409, error.message);
  throw error;
}

export function registerScheduleRoutes(
  app: FastifyInstance,
  deps: {
    db: Database;
    temporal: () => Promise<Client>;
    /** This process's workers deliver webhooks (refuseUnsignedNotify). @default false */
    deliversWebhooks?: boolean;
  },
): void {
  const withTemporal = async <T>(
    fn: (client: Client) => Promise<T>,
    deadlineMs = TEMPORAL_DEADLINE_MS,
  ): Promise<T> => {
    const client = await deps.temporal();
    return client.connection.withDeadline(Date.now() + deadlineMs, () => fn(client)).catch(toApiError);
  };

  app.post<{ Body: CreateScheduleBody }>(
    '/schedules',
    route({
      access: 'control',
      summary: 'Create a Temporal Schedule that starts this crawl (`gleaner schedule create`)',
      tags: ['schedules'],
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['seeds'],
        properties: {
          seeds: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: 1000 },
          id: { ...SCHEDULE_ID, description: 'default: the first seed host and a short random tail' },
          every: { ...DURATION, description: 'fire at this interval (at least 1s); or give cron' },
          cron: {
            type: 'string',
            minLength: 1,
            maxLength: 200,
            description: 'cron expression (UTC); or give every',
          },
          overlap: { ...OVERLAP, description: 'when the previous crawl still runs (default skip)' },
          jitter: { ...DURATION, description: 'random delay up to this per fire (default 0)' },
          catchupWindow: { ...DURATION, description: 'missed fires still run within this (default 1h)' },
          paused: { type: 'boolean', description: 'create it paused' },
          note: { type: 'string', minLength: 1, maxLength: 1000 },
          ...CRAWL_SPEC_PROPERTIES,
        },
      },
      response: { 201: detailsSchema },
      errors: [400, 409],
    }),
    async (request, reply) => {
      const { id, every, cron, overlap, jitter, catchupWindow, paused, note, ...crawlBody } = request.body;
      let requestBody: CreateScheduleRequest;
      try {
        requestBody = buildScheduleRequest(
          { id, every, cron, overlap, jitter, catchupWindow, paused, note },
          buildScheduledCrawlSpec(crawlBody),
          randomBytes(2).toString('hex'),
          (field) => field,
        );
      } catch (error) {
        toApiError(error);
      }
      refuseUnsignedNotify(requestBody.crawl.notify, deps.deliversWebhooks ?? false);
      const details = await withTemporal(async (client) => {
        await createCrawlSchedule(client, requestBody);
        return describeCrawlSchedule(client, requestBody.scheduleId);
      });
      request.log.info({ scheduleId: details.scheduleId, cadence: details.cadence }, 'schedule created');
      return reply
        .status(201)
        .header('location', `/schedules/${encodeURIComponent(details.scheduleId)}`)
        .send(details);
    },
  );

  app.get(
    '/schedules',
    route({
      access: 'read',
      summary: 'Schedules that start crawls',
      tags: ['schedules'],
      response: {
        200: {
          type: 'object',
          properties: {
            schedules: { type: 'array', items: { type: 'object', properties: viewProperties } },
          },
        },
      },
    }),
    async () => ({ schedules: await withTemporal((client) => listCrawlSchedules(client)) }),
  );

  app.get<{ Params: { id: string } }>(
    '/schedules/:id',
    route({
      access: 'read',
      summary: 'A schedule: cadence, policies, the crawl it starts, recent and next runs',
      tags: ['schedules'],
      params: idParams,
      response: { 200: detailsSchema },
      errors: [400, 404],
    }),
    async (request) => withTemporal((client) => describeCrawlSchedule(client, request.params.id)),
  );

  for (const action of ['pause', 'unpause'] as const) {
    app.post<{ Params: { id: string }; Body: { note?: string } | null }>(
      `/schedules/:id/${action}`,
      route({
        access: 'control',
        summary:
          action === 'pause' ? 'Stop a schedule from firing (a running crawl goes on)' : 'Let it fire again',
        tags: ['schedules'],
        params: idParams,
        body: noteBody,
        response: { 200: detailsSchema },
        errors: [400, 404],
      }),
      async (request) =>
        withTemporal(async (client) => {
          const note = request.body?.note;
          if (action === 'pause') await pauseCrawlSchedule(client, request.params.id, note);
          else await unpauseCrawlSchedule(client, request.params.id, note);
          return describeCrawlSchedule(client, request.params.id);
        }),
    );
  }

  app.post<{
    Params: { id: string };
    Querystring: { overlap?: OverlapName };
    Body: { overlap?: OverlapName } | null;
  }>(
    '/schedules/:id/trigger',
    route({
      access: 'control',
      summary: "Start the schedule's crawl now (also when paused); answers once the crawl exists",
      tags: ['schedules'],
      params: idParams,
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { overlap: { ...OVERLAP, description: "default: the schedule's policy" } },
      },
      body: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: { overlap: { ...OVERLAP, description: "default: the schedule's policy" } },
        description: 'send {}; overlap may be given here instead of in the query string',
      },
      response: {
        202: {
          type: 'object',
          properties: {
            scheduleId: { type: 'string' },
            crawlId: { type: 'string' },
            workflowId: { type: 'string' },
            progressUrl: { type: 'string' },
          },
        },
      },
      errors: [400, 404, 409],
    }),
    async (request, reply) => {
      const { id } = request.params;
      const overlap = queryOrBody('overlap', request.query.overlap, request.body?.overlap);
      const { crawlId, workflowId } = await withTemporal(
        (client) =>
          startCrawl(client, deps.db, {
            scheduleId: id,
            ...(overlap ? { overlap } : {}),
            timeoutMs: TRIGGER_DEADLINE_MS - 2_000,
          }),
        TRIGGER_DEADLINE_MS,
      );
      const started = { crawlId, workflowId };
      const progressUrl = `/crawls/${encodeURIComponent(started.crawlId)}`;
      return reply
        .status(202)
        .header('location', progressUrl)
        .send({ scheduleId: id, ...started, progressUrl });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/schedules/:id',
    route({
      access: 'control',
      summary: 'Delete a schedule (the crawls it started are kept)',
      tags: ['schedules'],
      params: idParams,
      response: { 204: { type: 'null' } },
      errors: [400, 404],
    }),
    async (request, reply) => {
      await withTemporal((client) => deleteCrawlSchedule(client, request.params.id));
      return reply.status(204).send();
    },
  );
}
