/** Long-running commands: `gleaner dev` (everything, embedded) and `gleaner worker` (some queues). */

import { PgliteDatabase } from '../db/pglite-database';
import { crawlsListUrl, QUEUE_KINDS, type QueueKind } from '../domain/temporal-names';
import { openRuntime } from '../infra/runtime';
import type { ApiCommandOptions } from './api-command';
import { psqlLines } from './dev-banner';
import { UsageError } from './errors';
import { inProcessWorkers } from './local-workers';

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve(signal));
  });
}

export async function runDevCommand(options: ApiCommandOptions = {}): Promise<void> {
  const runtime = await openRuntime({ workers: inProcessWorkers(QUEUE_KINDS), serve: true });
  try {
    // Loaded here, not at the top: Fastify and its plugins would slow every other command's start.
    const { startRuntimeApi } = await import('./api-command');
    // The default port may be taken (another project's gleaner dev): then any free one will do.
    const api = await startRuntimeApi(runtime, options).catch((error: unknown) => {
      if (options.port === undefined && error instanceof UsageError) {
        return startRuntimeApi(runtime, { ...options, port: 0 });
      }
      throw error;
    });
    if (runtime.db instanceof PgliteDatabase) runtime.db.updateLock({ apiUrl: api.url });
    process.stderr.write(
      [
        'gleaner dev is running (Ctrl-C to stop)',
        `  Temporal        ${runtime.temporalAddress} (namespace ${runtime.namespace})`,
        ...(runtime.temporalUiUrl
          ? [`  Temporal Web    ${crawlsListUrl(runtime.temporalUiUrl, runtime.namespace)}  (crawls only)`]
          : []),
        `  HTTP API        ${api.url}  (OpenAPI ${api.url}/openapi.json, docs ${api.url}/docs)`,
        ...psqlLines({ databaseUrl: runtime.databaseUrl, embedded: runtime.embedded.database }),
        `  workers         ${QUEUE_KINDS.join(', ')}`,
        '  other gleaner commands in this folder attach to this process',
        '',
      ].join('\n'),
    );
    await Promise.race([untilSignal(), runtime.workers?.done]).finally(() => api.close());
  } finally {
    await runtime.close();
  }
}

export async function runWorkerCommand(queues: readonly QueueKind[]): Promise<void> {
  const runtime = await openRuntime({ workers: inProcessWorkers(queues) });
  try {
    process.stderr.write(`gleaner worker polling ${queues.join(', ')} on ${runtime.temporalAddress}\n`);
    await Promise.race([untilSignal(), runtime.workers?.done]);
  } finally {
    await runtime.close();
  }
}
