/**
 * What the history-recording scripts (record-histories.ts, record-render-history.ts,
 * record-spill-history.ts) share: the real test stack, a crawl of a loopback site, a workflow's
 * history written as proto3 JSON into test/fixtures/histories, and the manifest that
 * test/workflows/replay.test.ts reads (file name → workflow id and type).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { temporal } from '@temporalio/proto';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import type { SiteServer } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

export const HISTORIES_DIR = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'test',
  'fixtures',
  'histories',
);
const MANIFEST_FILE = path.join(HISTORIES_DIR, 'manifest.json');

export interface HistoryManifestEntry {
  /** File name in test/fixtures/histories. */
  file: string;
  workflowId: string;
  workflowType: string;
}

/**
 * `historyToJSON` from `@temporalio/common/lib/proto-utils`, with one difference: it uses the
 * protobufjs copy that `@temporalio/proto`'s types were built with. In this install npm keeps a
 * separate protobufjs 8 under each of @temporalio/common, /proto and /worker (the root holds
 * @grpc/proto-loader's protobufjs 7), so the SDK's own `historyToJSON` throws "type must be a
 * Type" (its `instanceof` check sees a Type from another copy). Output format is identical:
 * proto3 JSON, as `temporal workflow show --output json` writes it.
 */
export function historyToJSON(history: temporal.api.history.v1.IHistory): string {
  const require = createRequire(import.meta.url);
  const proto = require('@temporalio/proto') as typeof import('@temporalio/proto');
  const { patchProtobufRoot } = require('@temporalio/proto/lib/patch-protobuf-root') as {
    patchProtobufRoot: (root: unknown) => { lookupType(name: string): unknown };
  };
  const { toJson } = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as {
    toJson(type: unknown, message: unknown): unknown;
  };
  const historyType = patchProtobufRoot(proto).lookupType('temporal.api.history.v1.History');
  return JSON.stringify(
    toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history)),
    null,
    2,
  );
}

/** Serves `html` at `pathname` as a 200 text/html page. */
export function routeHtml(site: SiteServer, pathname: string, html: string): void {
  site.route(pathname, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
}

/**
 * Starts the real test stack (Temporal dev server, native Postgres, in-process workers), runs
 * `record` on it, and closes the stack and then `servers`, whatever happens.
 */
export async function withRecordingStack(
  servers: ReadonlyArray<{ close(): Promise<void> }>,
  record: (stack: TestStack) => Promise<void>,
): Promise<void> {
  try {
    const stack = await startTestStack();
    try {
      await record(stack);
    } finally {
      await stack.close();
    }
  } finally {
    for (const server of servers) await server.close();
  }
}

/**
 * Runs one crawl to its end. The fixtures crawl loopback sites (`allowHosts: ['127.0.0.1']`) with
 * `delayMs: 50`, so durable timers appear in the histories; `spec` adds to or overrides that.
 */
export function runFixtureCrawl(
  stack: TestStack,
  spec: { crawlId: string; seeds: string[] } & Record<string, unknown>,
): Promise<CrawlSummary> {
  return stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(spec.crawlId),
    args: [{ delayMs: 50, allowHosts: ['127.0.0.1'], ...spec }],
  });
}

/** The complete history of a workflow: waits for it to close first. */
export async function closedHistory(
  stack: TestStack,
  workflowId: string,
): Promise<temporal.api.history.v1.IHistory> {
  const handle = stack.client.workflow.getHandle(workflowId);
  await handle.result();
  return handle.fetchHistory();
}

/** Writes one history as `test/fixtures/histories/<entry.file>` and says so. */
export function writeHistory(
  entry: HistoryManifestEntry,
  history: temporal.api.history.v1.IHistory,
  note = '',
): HistoryManifestEntry {
  mkdirSync(HISTORIES_DIR, { recursive: true });
  writeFileSync(path.join(HISTORIES_DIR, entry.file), `${historyToJSON(history)}\n`);
  console.info(`wrote ${entry.file}: ${history.events?.length ?? 0} events (${entry.workflowId})${note}`);
  return entry;
}

export function readManifest(): HistoryManifestEntry[] {
  return existsSync(MANIFEST_FILE)
    ? (JSON.parse(readFileSync(MANIFEST_FILE, 'utf8')) as HistoryManifestEntry[])
    : [];
}

export function writeManifest(entries: readonly HistoryManifestEntry[]): void {
  writeFileSync(MANIFEST_FILE, `${JSON.stringify(entries, null, 2)}\n`);
}

/** Puts `entry` last in the manifest in place of any older entry for the same file. */
export function replaceInManifest(entry: HistoryManifestEntry): void {
  writeManifest([...readManifest().filter((e) => e.file !== entry.file), entry]);
}
