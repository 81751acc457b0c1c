/**
 * `gleaner status <crawlId> [--json]`: answered from the store alone (no Temporal, no workers), so
 * it is immediate even when no process is working on the crawl. While an embedded crawl runs, it
 * reads through that process's socket.
 */
import { openStore } from '../infra/embedded-store';
import { formatFailures, readCrawlReport } from '../report/crawl-report';
import { UsageError } from './errors';

export async function runStatusCommand(crawlId: string, options: { json?: boolean }): Promise<void> {
  const db = await openStore();
  try {
    const report = await readCrawlReport(db, crawlId);
    if (!report) throw new UsageError(`no crawl with id ${crawlId}`);
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
  } finally {
    await db.close();
  }
}
