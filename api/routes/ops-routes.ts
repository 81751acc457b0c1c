/** `GET /healthz` (can we reach Temporal and Postgres?) and `GET /metrics` (Prometheus text). */
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import type { MetricsScraper } from '../../infra/metrics';

const PROBE_TIMEOUT_MS = 3_000;

interface Probe {
  up: boolean;
  latencyMs: number;
  error?: string;
}

async function probe(check: () => Promise<unknown>): Promise<Probe> {
  const startedAt = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)),
          PROBE_TIMEOUT_MS,
        );
      }),
    ]);
    return { up: true, latencyMs: Math.round(performance.now() - startedAt) };
  } catch (error) {
    // The cause's message says why (ECONNREFUSED, …) without the connection string.
    const cause = (error as { cause?: Error }).cause;
    const reason = cause?.message ?? (error as Error).message ?? String(error);
    return { up: false, latencyMs: Math.round(performance.now() - startedAt), error: reason };
  } finally {
    clearTimeout(timer);
  }
}

const probeSchema = {
  type: 'object',
  properties: { up: { type: 'boolean' }, latencyMs: { type: 'integer' }, error: { type: 'string' } },
} as const;
const healthSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    message: { type: 'string' },
    database: probeSchema,
    temporal: probeSchema,
  },
} as const;

export function registerOpsRoutes(
  app: FastifyInstance,
  deps: { db: Database; temporal: () => Promise<Client>; metrics: MetricsScraper },
): void {
  app.get(
    '/healthz',
    {
      config: { access: 'open' },
      schema: {
        summary: 'Whether Temporal and the database are reachable (200 when both are, else 503)',
        tags: ['operations'],
        response: { 200: healthSchema, 503: healthSchema },
      },
    },
    async (_request, reply) => {
      const [database, temporal] = await Promise.all([
        probe(() => deps.db.query('SELECT 1')),
        probe(async () => {
          const client = await deps.temporal();
          await client.connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () =>
            client.workflowService.getSystemInfo({}),
          );
        }),
      ]);
      const down = [...(database.up ? [] : ['database']), ...(temporal.up ? [] : ['Temporal'])];
      return reply.status(down.length === 0 ? 200 : 503).send({
        status: down.length === 0 ? 'ok' : 'unavailable',
        message:
          down.length === 0 ? 'Temporal and the database are reachable' : `unreachable: ${down.join(', ')}`,
        database,
        temporal,
      });
    },
  );

  app.get(
    '/metrics',
    {
      config: { access: 'open' },
      schema: {
        summary: 'Prometheus metrics (text exposition format); counts from the store are at most 15 s old',
        tags: ['operations'],
        produces: ['text/plain'],
      },
    },
    async (_request, reply) => {
      const { contentType, body } = await deps.metrics.render();
      return reply.type(contentType).send(body);
    },
  );
}
