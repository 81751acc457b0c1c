/**
 * `gleaner status <crawlId> [--json]`: answered from the store alone (no Temporal, no workers), so
 * it is immediate even when no process is working on the crawl. While an embedded crawl runs, it
 * reads through that process's socket. A crawl the store does not know may still be open in
 * Temporal, waiting for a worker: a schedule fired it (on the embedded default, while some short
 * command had the embedded Temporal up) or `temporal workflow start` began it. Only then is Temporal
 * asked, and the answer says what to run.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { openStore } from '../infra/embedded-store';
import { gleanerHome, RuntimeError } from '../infra/gleaner-home';
import type { Runtime } from '../infra/runtime';
import { formatFailures, readCrawlReport } from '../report/crawl-report';
import { UsageError } from './errors';

export async function runStatusCommand(crawlId: string, options: { json?: boolean }): Promise<void> {
  const db = await openStore({ requireCorpus: true });
  let report: Awaited<ReturnType<typeof readCrawlReport>>;
  try {
    report = await readCrawlReport(db, crawlId);
  } finally {
    // Closed before Temporal is asked: on the embedded default that opens the store again.
    await db.close();
  }
  if (!report) {
    await reportFromTemporal(crawlId, options);
    return;
  }
  if (options.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  const open = report.status === 'running';
  const lines = [
    `crawl ${crawlId}: ${open ? 'open' : report.status}`,
    `  seeds           ${report.seeds.join(' ')}`,
    `  started         ${report.startedAt}${report.finishedAt ? `, finished ${report.finishedAt}` : ''}`,
    `  pages fetched   ${report.pagesFetched}`,
    `  pages indexed   ${report.pagesIndexed}`,
    `  URLs discovered ${report.urlsDiscovered}`,
    ...formatFailures(report.failures),
  ];
  if (open) {
    lines.push(
      `  if no gleaner process is working on it, \`gleaner resume ${crawlId}\` continues it where it stopped`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** A crawl with no record in the store: open in Temporal with no worker yet, or no crawl at all. */
async function reportFromTemporal(crawlId: string, options: { json?: boolean }): Promise<void> {
  // An embedded Temporal that never ran holds no workflow: no dev server is started to be sure.
  const temporalState = path.join(gleanerHome(), 'temporal.db');
  if (!process.env.TEMPORAL_ADDRESS && !existsSync(temporalState))
    throw new UsageError(`no crawl with id ${crawlId}`);
  const { openRuntime, StoreBusyError } = await import('../infra/runtime');
  const { crawlWorkflowRecord } = await import('../infra/crawl-workflow-state');
  let runtime: Runtime;
  try {
    runtime = await openRuntime({ ui: false });
  } catch (error) {
    // Another gleaner process (a crawl) holds the embedded store without serving Temporal to others;
    // its workers take up any waiting crawl, which then shows in the store.
    if (error instanceof StoreBusyError) throw new UsageError(`no crawl with id ${crawlId}`);
    if (error instanceof RuntimeError)
      throw new UsageError(
        `no crawl with id ${crawlId} in the store, and a crawl still waiting in Temporal for a worker cannot be seen: ${error.message}`,
      );
    throw error;
  }
  try {
    const record = await crawlWorkflowRecord(runtime.client, crawlId);
    if (!record) throw new UsageError(`no crawl with id ${crawlId}`);
    const waiting = record.workflowStatus === 'RUNNING';
    const status = waiting ? 'waiting' : record.workflowStatus.toLowerCase();
    const startedAt = record.startTime.toISOString();
    if (options.json) {
      const scheduleId = record.scheduleId ? { scheduleId: record.scheduleId } : {};
      process.stdout.write(`${JSON.stringify({ crawlId, status, startedAt, ...scheduleId })}\n`);
      return;
    }
    const by = record.scheduleId ? ` by schedule ${record.scheduleId}` : '';
    const lines = [
      `crawl ${crawlId}: ${waiting ? 'waiting for a worker' : `${status} in Temporal`}`,
      `  started         ${startedAt}${by}`,
    ];
    if (!waiting) lines.push('  no gleaner worker ever ran it: the store has nothing of it');
    else if (runtime.embedded.temporal && !runtime.embedded.attached)
      lines.push(
        '  no gleaner process has worked on it yet (scheduled crawls run while `gleaner dev` runs);',
        `  \`gleaner resume ${crawlId}\` runs it here now`,
      );
    else if (runtime.embedded.attached)
      lines.push('  `gleaner dev` is running: its workers take it up shortly');
    else
      lines.push(
        `  no gleaner worker has taken it up yet: start \`gleaner worker\` against ${runtime.temporalAddress}`,
      );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await runtime.close();
  }
}
