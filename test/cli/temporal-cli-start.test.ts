/**
 * A crawl started with the plain Temporal CLI (`temporal workflow start --type crawlWorkflow
 * --input '<spec>'`) runs exactly like one started by `gleaner crawl`, and its progress is
 * readable with `temporal workflow query`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { findTemporalBinary } from '../../infra/temporal-cli';
import { addGeneratedPages } from '../../testbed/generated-site';
import { crawlArgs, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlProgress, CrawlSummary } from '../../workflows/messages';

const run = promisify(execFile);
let stack: TestStack;
let site: SiteServer;

beforeAll(async () => {
  site = await serveSite(undefined);
  addGeneratedPages(site, 12);
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
  await site?.close();
});

function temporal(...args: string[]) {
  return run(findTemporalBinary() as string, [...args, '--address', stack.temporal.address]);
}

describe('starting a crawl from the Temporal CLI', () => {
  it('crawls like `gleaner crawl` and answers progress queries', async () => {
    const spec = { crawlId: 'from-temporal-cli', seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'] };
    await temporal(
      'workflow',
      'start',
      '--type',
      WORKFLOW_TYPES.crawl,
      '--task-queue',
      TASK_QUEUES.crawl,
      '--workflow-id',
      crawlWorkflowId(spec.crawlId),
      '--input',
      JSON.stringify(spec),
    );
    const fromCli = (await stack.client.workflow
      .getHandle(crawlWorkflowId(spec.crawlId))
      .result()) as CrawlSummary;

    const query = await temporal(
      'workflow',
      'query',
      '--workflow-id',
      crawlWorkflowId(spec.crawlId),
      '--type',
      'progress',
      '-o',
      'json',
    );
    const progress = JSON.parse(query.stdout).queryResult[0] as CrawlProgress;
    expect(progress.crawlId).toBe(spec.crawlId);
    expect(progress.totals.fetched).toBe(12);
    expect(progress.origins.map((origin) => origin.origin)).toEqual([site.origin]);

    const viaGleaner = await runGleaner(
      crawlArgs(site.url, ['--crawl-id', 'from-gleaner', '--wait', '--no-local-workers']),
      { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url },
    );
    expect(viaGleaner.code).toBe(0);
    const fromGleaner = JSON.parse(viaGleaner.stdout) as CrawlSummary;
    const comparable = (s: CrawlSummary) => ({
      pagesFetched: s.pagesFetched,
      pagesIndexed: s.pagesIndexed,
      links: s.links,
      errors: s.errors,
      origins: s.origins,
      status: s.status,
    });
    expect(comparable(fromCli)).toEqual(comparable(fromGleaner));
    expect(fromCli.pagesFetched).toBe(12);
  });

  it('a crawl without crawlId takes its id from the workflow id', async () => {
    await temporal(
      'workflow',
      'start',
      '--type',
      WORKFLOW_TYPES.crawl,
      '--task-queue',
      TASK_QUEUES.crawl,
      '--workflow-id',
      'crawl-implicit-id',
      '--input',
      JSON.stringify({ seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'], maxPages: 3 }),
    );
    const summary = (await stack.client.workflow.getHandle('crawl-implicit-id').result()) as CrawlSummary;
    expect(summary.crawlId).toBe('implicit-id');
    expect(summary.pagesFetched).toBe(3);
  });
});
