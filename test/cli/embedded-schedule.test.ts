import { describe, expect, it } from 'vitest';
import { runGleaner, spawnGleaner, waitFor } from '../../testbed/gleaner-process';
import { siteAndHomeForFile } from '../../testbed/site-and-home';
import { isProtocolFile } from '../../testbed/site-server';
import type { CrawlSummary } from '../../workflows/messages';

const PAGES = 3;
const fixture = siteAndHomeForFile(PAGES);

describe('gleaner schedule on the embedded default', () => {
  it('fires while `gleaner dev` runs, on its Temporal and workers', async () => {
    const { site, home } = fixture;
    const env = { GLEANER_HOME: home };
    const dev = spawnGleaner(['dev', '--api-port', '0'], env);
    let devErr = '';
    dev.stderr?.on('data', (chunk) => {
      devErr += chunk;
    });
    try {
      await waitFor(() => devErr.includes('gleaner dev is running'), 240_000, 'gleaner dev to start');
      const created = await runGleaner(
        [
          'schedule',
          'create',
          site.url,
          '--every',
          '2s',
          '--id',
          'dev-docs',
          '--allow-host',
          '127.0.0.1',
          '--delay-ms',
          '0',
        ],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout.trim()).toBe('dev-docs');
      expect(created.stderr).toMatch(/schedule dev-docs created: every 2s, next run /);

      // Two scheduled crawls' worth of page requests, with no command of ours running a worker.
      const pageRequests = () => site.log.filter((entry) => !isProtocolFile(entry.path)).length;
      await waitFor(() => pageRequests() >= 2 * PAGES, 240_000, 'two scheduled crawls');

      const paused = await runGleaner(['schedule', 'pause', 'dev-docs'], env);
      expect(paused.code).toBe(0);
      const described = await runGleaner(['schedule', 'describe', 'dev-docs', '--json'], env);
      const details = JSON.parse(described.stdout);
      expect(details.paused).toBe(true);
      expect(details.recentRuns.length).toBeGreaterThanOrEqual(2);
      const firstCrawl = details.recentRuns[0].crawlId as string;
      expect(firstCrawl).toMatch(/^dev-docs-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const status = await runGleaner(['status', firstCrawl, '--json'], env);
      expect(JSON.parse(status.stdout)).toMatchObject({
        // `gleaner status` answers from the store: the crawl row's status.
        status: 'completed',
        summary: { pagesFetched: PAGES },
      });

      const triggered = await runGleaner(['schedule', 'trigger', 'dev-docs', '--wait', '--json'], env);
      expect(triggered.code, triggered.stderr).toBe(0);
      const summary = JSON.parse(triggered.stdout) as CrawlSummary;
      expect(summary).toMatchObject({ status: 'completed', pagesFetched: PAGES });
      expect(summary.crawlId).toMatch(/^dev-docs-/);

      const listed = await runGleaner(['schedule', 'list'], env);
      expect(listed.stdout).toMatch(/^ID\s+CADENCE\s+STATE/m);
      expect(listed.stdout).toMatch(/dev-docs\s+every 2s\s+paused/);
      expect((await runGleaner(['schedule', 'delete', 'dev-docs'], env)).code).toBe(0);
    } finally {
      if (dev.exitCode === null && dev.signalCode === null) {
        const exited = new Promise((resolve) => dev.once('exit', resolve));
        dev.kill('SIGTERM');
        await exited;
      }
    }
  }, 900_000);
});
