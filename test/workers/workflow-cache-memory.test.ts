/**
 * What a cached origin workflow costs the worker's heap. The SDK initialises the workflow bundle's
 * modules afresh for every workflow it caches, except the ones it preloads; zod and the crawl spec's
 * schema, which every origin workflow builds, cost ~1.3 MB per cached origin until they were
 * preloaded (workers/workflow-bundle.ts, workflows/preloaded.ts), which a crawl worker caching 200
 * of them felt. Run in the SDK's debug mode, so the workflows live on this thread's heap, where a
 * forced GC leaves only what they hold.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCrawlSpec } from '../../domain/crawl-spec';
import { WORKFLOW_TYPES } from '../../domain/temporal-names';
import { startTemporalDevServer, type TemporalDevServer } from '../../infra/temporal-cli';
import { workflowBundle } from '../../workers/workflow-bundle';
import type { OriginWorkflowInput } from '../../workflows/origin-workflow';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const ORIGINS = 120;
const TASK_QUEUE = 'workflow-cache-memory';

function heapUsedMiB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

describe('a cached origin workflow', () => {
  let temporal: TemporalDevServer;
  let connection: Connection;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    temporal = await startTemporalDevServer({ uiPort: false });
    connection = await Connection.connect({ address: temporal.address });
    worker = await Worker.create({
      connection: await NativeConnection.connect({ address: temporal.address }),
      taskQueue: TASK_QUEUE,
      workflowBundle: await workflowBundle(),
      maxCachedWorkflows: ORIGINS + 10,
      debugMode: true,
    });
    running = worker.run();
  });

  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running;
    await connection?.close();
    await temporal?.stop();
  });

  it('holds well under half a megabyte of heap: zod and the spec schema are shared', async () => {
    const client = new Client({ connection });
    const spec = parseCrawlSpec({ seeds: ['http://127.0.0.1:9/'] }, 'cache-memory');
    // A first origin initialises the thread's shared modules, so the baseline holds them.
    const start = (i: number) => {
      const origin = `http://127.0.0.${(i % 250) + 2}:${1000 + i}`;
      const input: OriginWorkflowInput = { spec, origin, initial: [{ url: `${origin}/`, depth: 0 }] };
      // Each waits on its robots.txt fetch, which no worker here takes: it stays open and cached.
      return client.workflow.start(WORKFLOW_TYPES.origin, {
        taskQueue: TASK_QUEUE,
        workflowId: `cache-memory-${i}`,
        args: [input],
      });
    };
    const cached = async (n: number) => {
      const deadline = Date.now() + 120_000;
      while (worker.getStatus().numCachedWorkflows < n) {
        if (Date.now() > deadline)
          throw new Error(`only ${worker.getStatus().numCachedWorkflows} of ${n} cached`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // The task that put the last one in the cache may still be completing.
      await new Promise((resolve) => setTimeout(resolve, 500));
    };
    await start(0);
    await cached(1);
    const before = heapUsedMiB();
    await Promise.all(Array.from({ length: ORIGINS }, (_, i) => start(i + 1)));
    await cached(ORIGINS + 1);
    const perWorkflowMiB = (heapUsedMiB() - before) / ORIGINS;
    expect(worker.getStatus().numCachedWorkflows).toBe(ORIGINS + 1);
    expect(perWorkflowMiB).toBeLessThan(0.5);
  });
});
