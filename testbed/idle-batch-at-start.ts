/**
 * An idle origin's continued run that finds the crawl's batch in its history before its first
 * workflow task: the order a crawl meets only by chance (an idle origin continues as new just as a
 * late link for it arrives), made certain with signal-with-start. Its run carries `idleReported` from
 * the run before it. Runs begun before `idle-after-every-batch-v1` kept that flag through the batch,
 * never reported idle again, and the crawl waited for the origin for ever (a fresh-clone CI run met
 * it in test/workflows/workflows.test.ts). Shared by that test and the history recorder.
 */
import type http from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { parseCrawlSpec } from '../domain/crawl-spec';
import { newOriginState, type OriginState } from '../domain/origin-state';
import { crawlWorkflowId, originWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../domain/temporal-names';
import { isProtocolFile, serveSite } from './site-server';
import type { TestStack } from './stack';

export interface IdleBatchAtStart {
  workflowId: string;
  /** The origin run's history, up to its termination once the test had looked. */
  history: temporal.api.history.v1.IHistory;
  /** Paths the origin's server was asked for, robots.txt and sitemaps aside. */
  requested: string[];
  /** The idle reports the run sent the crawl. */
  idleReports: number;
}

const html = { 'content-type': 'text/html; charset=utf-8' };

function idleReportsIn(history: temporal.api.history.v1.IHistory): number {
  return (history.events ?? []).filter((event) => {
    const signal = event.signalExternalWorkflowExecutionInitiatedEventAttributes;
    const payload = signal?.input?.payloads?.[0];
    if (signal?.signalName !== 'originReport' || !payload) return false;
    return defaultPayloadConverter.fromPayload<{ idle?: boolean }>(payload).idle === true;
  }).length;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the case on `stack` under `crawlId`: a crawl whose one seed is held unanswered (the workflow
 * the origin reports to), and beside it the origin's run, started with a carried idle state, one page
 * of quota and the batch `/late`. Waits for the page and then up to `reportWithinMs` for the idle
 * report, terminates the origin run, and lets the crawl finish.
 */
export async function runIdleBatchAtStart(
  stack: TestStack,
  crawlId: string,
  reportWithinMs = 10_000,
): Promise<IdleBatchAtStart> {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holder = await serveSite(undefined);
  const site = await serveSite(undefined);
  try {
    holder.route('/', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      void released.then(() => res.writeHead(200, html).end('<!doctype html><p>Held.</p>'));
    });
    site.route('/late', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200, html).end('<!doctype html><title>Late</title><main><p>A late page.</p></main>');
    });
    const crawl = await stack.client.workflow.start(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ crawlId, seeds: [holder.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
    });
    const spec = parseCrawlSpec({
      crawlId,
      seeds: [site.url],
      delayMs: 0,
      allowHosts: ['127.0.0.1'],
      sitemaps: false,
    });
    const state: OriginState = { ...newOriginState(false, 1), robotsChecked: true, idleReported: true };
    const workflowId = originWorkflowId(crawlId, site.origin);
    const origin = await stack.client.workflow.signalWithStart(WORKFLOW_TYPES.origin, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId,
      args: [{ spec, origin: site.origin, initial: [], state }],
      signal: 'enqueue',
      signalArgs: [{ seq: 1, items: [{ url: `${site.url}late`, depth: 1 }] }],
    });
    const requested = () => site.log.map((entry) => entry.path).filter((p) => !isProtocolFile(p));
    for (let waited = 0; waited < 20_000 && requested().length === 0; waited += 100) await pause(100);
    let idleReports = 0;
    for (let waited = 0; waited < reportWithinMs && idleReports === 0; waited += 200) {
      await pause(200);
      idleReports = idleReportsIn(await origin.fetchHistory());
    }
    await origin.terminate('the test has looked');
    release();
    await crawl.result();
    return { workflowId, history: await origin.fetchHistory(), requested: requested(), idleReports };
  } finally {
    release();
    await holder.close();
    await site.close();
  }
}
