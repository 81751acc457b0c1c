/**
 * `gleaner api [--host H] [--port P]`: the HTTP API on its own, for real deployments (with
 * TEMPORAL_ADDRESS and DATABASE_URL), or beside a running `gleaner dev` (it attaches). On the
 * embedded default with nothing running it owns the stack, so it also runs the workers: crawls
 * started through it must make progress.
 */

import path from 'node:path';
import { allowedHostsFromEnv, isLoopbackName } from '../api/cross-site-guards';
import { DEFAULT_API_HOST, DEFAULT_API_PORT } from '../api/defaults';
import { createSearchService } from '../api/search-service';
import { apiAuthFromEnv, type RunningApi, startApiServer } from '../api/server';
import { readLock } from '../db/pglite-database';
import { QUEUE_KINDS } from '../domain/temporal-names';
import { gleanerHome, openRuntime, type Runtime, RuntimeError } from '../infra/runtime';
import { UsageError } from './errors';
import { inProcessWorkers } from './local-workers';

export interface ApiCommandOptions {
  host?: string;
  port?: number;
  /** Host names served besides loopback ones (`--allowed-host`, repeatable); GLEANER_API_HOSTS adds more. */
  allowedHost?: string[];
}

/** Starts the API on an open runtime; a taken port is a user-facing error naming the flag. */
export async function startRuntimeApi(runtime: Runtime, options: ApiCommandOptions): Promise<RunningApi> {
  const auth = apiAuthFromEnv();
  const port = options.port ?? DEFAULT_API_PORT;
  const host = options.host ?? DEFAULT_API_HOST;
  const allowedHosts = [...(options.allowedHost ?? []), ...allowedHostsFromEnv()];
  const api = await startApiServer({
    host,
    port,
    allowedHosts,
    db: runtime.db,
    temporal: async () => runtime.client,
    namespace: runtime.namespace,
    // `gleaner api` and `gleaner dev` run workers for every queue, the crawl queue's deliveries included.
    deliversWebhooks: runtime.workers !== undefined,
    // The model loads only when the first search by meaning needs it, on the process's one model
    // thread: the one the in-process embed workers use, so the API adds no second model, and a query
    // is never embedded on the thread that serves every request.
    search: createSearchService(runtime.db, async () =>
      (await import('../embed/embedder-thread')).sharedThreadEmbedder(),
    ),
    ...auth,
  }).catch((error: unknown) => {
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE') {
      throw new UsageError(`port ${port} is in use; choose another with --port (0 picks a free one)`);
    }
    // A listen address that is no address of this machine, or a name that resolves to none, is the
    // caller's to fix: before, "unexpected error" and exit 1, as if gleaner had failed.
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      const why = code === 'EADDRNOTAVAIL' ? 'not an address of this machine' : 'the name does not resolve';
      throw new UsageError(`cannot listen on ${host}: ${why}; give one of this machine's addresses or names`);
    }
    throw error;
  });
  if (!isLoopbackName(host)) {
    if (!auth.token)
      process.stderr.write(
        'note: GLEANER_API_TOKEN is unset, so starting and stopping crawls is refused to non-loopback clients\n',
      );
    if (allowedHosts.length === 0)
      process.stderr.write(
        'note: only loopback Host names are answered; list the names clients use with --allowed-host or GLEANER_API_HOSTS\n',
      );
  }
  return api;
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve(signal));
  });
}

/** How often an API attached to another gleaner process checks that the process still serves. */
const OWNER_CHECK_MS = 1_000;

/**
 * Resolves with the pid of the gleaner process this one attached to (`gleaner dev`, or a `gleaner
 * api` running the stack) once it no longer serves the store: its socket and its Temporal went with
 * it, and a restarted one listens on other ports. Before, the attached API answered 503 for good.
 */
function attachedOwnerStopped(): { stopped: Promise<number>; cancel(): void } | undefined {
  const lockFile = path.join(gleanerHome(), 'pgdata.lock');
  const owner = readLock(lockFile);
  if (!owner) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<number>((resolve) => {
    timer = setInterval(() => {
      const holder = readLock(lockFile);
      if (holder?.pid !== owner.pid || !holder.serving) resolve(owner.pid);
    }, OWNER_CHECK_MS);
  });
  return { stopped, cancel: () => clearInterval(timer) };
}

export async function runApiCommand(options: ApiCommandOptions): Promise<void> {
  const embeddedTemporal = !process.env.TEMPORAL_ADDRESS;
  const runtime = await openRuntime({
    workers: inProcessWorkers(embeddedTemporal ? QUEUE_KINDS : []),
    serve: true,
  });
  let api: RunningApi | undefined;
  try {
    api = await startRuntimeApi(runtime, options);
    process.stderr.write(
      [
        // A wildcard bind is reachable from other machines: say so, not only the loopback URL.
        options.host === '0.0.0.0' || options.host === '::'
          ? `gleaner api listening on every interface (${options.host}), port ${new URL(api.url).port}; here at ${api.url} (Ctrl-C to stop)`
          : `gleaner api listening on ${api.url} (Ctrl-C to stop)`,
        `  OpenAPI         ${api.url}/openapi.json (browse ${api.url}/docs)`,
        `  Temporal        ${runtime.temporalAddress} (namespace ${runtime.namespace})`,
        ...(runtime.workers ? [`  workers         ${QUEUE_KINDS.join(', ')}`] : []),
        '',
      ].join('\n'),
    );
    const owner = runtime.embedded.attached ? attachedOwnerStopped() : undefined;
    const ended = await Promise.race([
      untilSignal(),
      ...(runtime.workers ? [runtime.workers.done] : []),
      ...(owner ? [owner.stopped] : []),
    ]).finally(() => owner?.cancel());
    if (typeof ended === 'number') {
      throw new RuntimeError(
        `the gleaner process this API attached to (pid ${ended}) has stopped, and its store and Temporal ` +
          'with it: start gleaner api again (it attaches to the next one, or runs the stack itself)',
      );
    }
  } finally {
    await api?.close();
    await runtime.close();
    await (await import('../embed/embedder-thread')).closeSharedEmbedderThread();
  }
}
