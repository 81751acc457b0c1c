/**
 * The HTTP API: Fastify with a JSON schema on every route (validation, serialisation and the
 * OpenAPI document come from the same schemas). `buildApiServer` wires routes to their
 * dependencies without listening, for tests and embedding; `startApiServer` also listens.
 */
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Client } from '@temporalio/client';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Database } from '../db/database';
import { type Logger, logger as rootLogger } from '../infra/logger';
import { MetricsScraper, observeApiRequest } from '../infra/metrics';
import { installAuth } from './auth';
import { installCrossSiteGuards } from './cross-site-guards';
import { answerFrameworkError, installErrorHandlers } from './errors';
import { installNulParameterGuard, requestValidation } from './request-validation';
import { registerChangeRoutes } from './routes/change-routes';
import { registerContextRoutes } from './routes/context-routes';
import { registerCrawlRoutes } from './routes/crawl-routes';
import { registerGraphRoutes } from './routes/graph-routes';
import { registerMcpRoutes } from './routes/mcp-routes';
import { registerOpsRoutes } from './routes/ops-routes';
import { registerPageRoutes } from './routes/page-routes';
import { registerScheduleRoutes } from './routes/schedule-routes';
import { registerSearchRoutes } from './routes/search-routes';
import { registerTagRoutes } from './routes/tag-routes';
import type { SearchFunction } from './search-service';

export interface ApiDeps {
  db: Database;
  /** The Temporal client, resolved lazily so the API can start (and report 503) while Temporal is down. */
  temporal: () => Promise<Client>;
  namespace?: string;
  /** `GET /search`; without it the route answers 503. */
  search?: SearchFunction;
  /** Bearer token guarding crawl control (GLEANER_API_TOKEN); unset: loopback clients only. */
  token?: string;
  /** Reads need no token (GLEANER_API_SEARCH_OPEN, default true). */
  searchOpen?: boolean;
  logger?: Logger;
  /** Serve Swagger UI at /docs. @default true */
  docsUi?: boolean;
  /**
   * Host names answered besides loopback ones (GLEANER_API_HOSTS, `--allowed-host`); any other
   * Host header is refused with 421, which stops DNS rebinding. @default []
   */
  allowedHosts?: readonly string[];
  /** How long `/metrics` reuses the counts it read from the store and Temporal. @default 15000 */
  metricsMaxAgeMs?: number;
  /**
   * This process's own workers sign and deliver webhooks (the embedded default): a crawl or schedule
   * with `notify` is refused while GLEANER_WEBHOOK_SECRET is unset here. @default false
   */
  deliversWebhooks?: boolean;
}

/** Token and openness from the environment: GLEANER_API_TOKEN, GLEANER_API_SEARCH_OPEN. */
export function apiAuthFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<ApiDeps, 'token' | 'searchOpen'> {
  const token = env.GLEANER_API_TOKEN?.trim();
  const open = env.GLEANER_API_SEARCH_OPEN?.trim().toLowerCase();
  return {
    ...(token ? { token } : {}),
    searchOpen: !(open === 'false' || open === '0' || open === 'no'),
  };
}

/**
 * Credentials a log record of this API may carry (a request's headers, an error's config): Fastify's
 * request serializer logs no headers, but any `{ req }`, `{ headers }` or `{ err }` a route adds
 * must not put a bearer token or cookie in the log file.
 */
export const REDACTED_LOG_PATHS = [
  'authorization',
  'cookie',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'request.headers.authorization',
  'err.config.headers.authorization',
  'err.config.headers.cookie',
  'token',
  'apiKey',
  'password',
] as const;

export async function buildApiServer(deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // Typed as Fastify's logger so routes get the plain FastifyInstance the route modules take.
    loggerInstance: (deps.logger ?? rootLogger).child(
      { component: 'api' },
      { redact: { paths: [...REDACTED_LOG_PATHS], censor: '[redacted]' } },
    ) as FastifyBaseLogger,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
    schemaController: requestValidation,
    frameworkErrors: answerFrameworkError,
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    observeApiRequest(
      request.routeOptions.url ?? 'unmatched',
      request.method,
      reply.statusCode,
      reply.elapsedTime,
    );
  });
  installErrorHandlers(app);
  installCrossSiteGuards(app, { allowedHosts: deps.allowedHosts ?? [] });
  installAuth(app, { ...(deps.token ? { token: deps.token } : {}), searchOpen: deps.searchOpen ?? true });
  installNulParameterGuard(app);
  const metrics = new MetricsScraper(
    { db: deps.db, temporal: deps.temporal, namespace: deps.namespace ?? 'default' },
    deps.metricsMaxAgeMs === undefined ? {} : { maxAgeMs: deps.metricsMaxAgeMs },
  );

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'gleaner API',
        version: '0.1.0',
        description:
          'Search the corpus, read pages and the link graph, start and watch crawls. Crawl control needs ' +
          '"Authorization: Bearer <GLEANER_API_TOKEN>" (or a loopback client when no token is set), and ' +
          'every POST, PUT or PATCH a JSON body ("Content-Type: application/json"; send {} when empty). Only ' +
          'loopback Host names and those in GLEANER_API_HOSTS are served.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      tags: [
        { name: 'search', description: 'hybrid search over chunks' },
        { name: 'corpus', description: 'pages and the link graph' },
        { name: 'crawls', description: 'start, list, watch and steer crawls' },
        { name: 'schedules', description: 'recrawls on Temporal Schedules' },
        { name: 'operations', description: 'health and metrics' },
      ],
    },
  });
  if (deps.docsUi !== false) await app.register(swaggerUi, { routePrefix: '/docs' });

  registerSearchRoutes(app, deps.search);
  registerContextRoutes(app, deps.search);
  registerTagRoutes(app, deps.db);
  registerPageRoutes(app, deps.db);
  registerGraphRoutes(app, deps.db);
  registerChangeRoutes(app, deps.db);
  const deliversWebhooks = deps.deliversWebhooks ?? false;
  registerCrawlRoutes(app, { db: deps.db, temporal: deps.temporal, deliversWebhooks });
  registerScheduleRoutes(app, { db: deps.db, temporal: deps.temporal, deliversWebhooks });
  registerOpsRoutes(app, { db: deps.db, temporal: deps.temporal, metrics });
  registerMcpRoutes(app, {
    db: deps.db,
    temporal: deps.temporal,
    ...(deps.search ? { search: deps.search } : {}),
  });
  app.get('/openapi.json', { config: { access: 'open' }, schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  return app;
}

export interface RunningApi {
  app: FastifyInstance;
  /** http://host:port the server listens on. */
  url: string;
  close(): Promise<void>;
}

export async function startApiServer(
  options: ApiDeps & { host?: string; port?: number },
): Promise<RunningApi> {
  const { host = '127.0.0.1', port = 8700, ...deps } = options;
  // The address it is bound to by name is a Host it serves; a wildcard bind names nothing.
  const bound = host === '0.0.0.0' || host === '::' ? [] : [host.includes(':') ? `[${host}]` : host];
  const app = await buildApiServer({ ...deps, allowedHosts: [...(deps.allowedHosts ?? []), ...bound] });
  await app.listen({ host, port }).catch(async (error: unknown) => {
    await app.close();
    throw error;
  });
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return { app, url: `http://${shownHost}:${boundPort}`, close: () => app.close() };
}
