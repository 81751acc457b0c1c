import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './testbed/longest-first';

/**
 * Files that assert bounds on time (CPU or wall) for work they do in their own process: linear-time
 * growth checks, CPU budgets, fetch deadlines; and cli/embedded, whose Ctrl-C test races two
 * `gleaner` reads against a paced crawl (beside the unit files the crawl won: 12 of 12 pages before
 * the SIGINT). They run last and alone (one worker thread, each file in a thread of its own), so
 * nothing else on the two cores moves their figures.
 */
const TIMED = [
  'test/domain/linear-time-properties.test.ts',
  'test/domain/site-template.test.ts',
  'test/domain/text-linear-time-properties.test.ts',
  'test/extract/linear-time-properties.test.ts',
  'test/extract/documents-linear-time.test.ts',
  'test/extract/language-linear-time.test.ts',
  'test/domain/chunking.test.ts',
  'test/domain/links.test.ts',
  'test/domain/robots.test.ts',
  'test/domain/sitemap.test.ts',
  'test/extract/bad-input.test.ts',
  'test/extract/extract-page.test.ts',
  'test/embed/tokenizer.test.ts',
  'test/activities/http/fetch-page.test.ts',
  'test/activities/http/content-coding.test.ts',
  'test/cli/embedded.test.ts',
  // Its event-loop test tells a stall from the fetch's own work by a 400 ms floor.
  'test/activities/page-analysis-deadline.test.ts',
];

/**
 * Files whose test process runs no Temporal SDK and no browser: pure logic, the extraction pipeline,
 * the embedding model, in-process PGlite, a native Postgres as a child process, and `gleaner`
 * commands run as child processes (robots, search, export, and the embedded default, whose dev
 * server and PGlite live in the child; these mostly wait on it). They run one at a time on one
 * worker thread, beside the integration files.
 */
const UNIT = [
  'test/domain/**/*.test.ts',
  'test/testbed/**/*.test.ts',
  'test/extract/**/*.test.ts',
  'test/embed/**/*.test.ts',
  'test/export/**/*.test.ts',
  'test/activities/http/**/*.test.ts',
  'test/activities/render/**/*.test.ts',
  'test/activities/robots-interpret.test.ts',
  'test/activities/trap-budgets.test.ts',
  'test/activities/page-content.test.ts',
  'test/activities/page-analysis-documents.test.ts',
  'test/activities/page-content-documents.test.ts',
  'test/activities/page-batches.test.ts',
  'test/activities/recrawl-store.test.ts',
  'test/report/crawl-report.test.ts',
  'test/report/integrity-report.test.ts',
  'test/activities/summarize-llm.test.ts',
  'test/activities/summarize-offline.test.ts',
  'test/api/log-redaction.test.ts',
  'test/cli/frontier-option.test.ts',
  'test/cli/only-due.test.ts',
  'test/cli/robots-command.test.ts',
  'test/cli/export-command.test.ts',
  'test/cli/embedded-schedule.test.ts',
  'test/cli/kill-resume.test.ts',
  'test/cli/demo.test.ts',
  'test/cli/dev-secrets.test.ts',
  'test/cli/notify-command.test.ts',
  'test/db/store-files.test.ts',
  'test/db/pglite-store.test.ts',
  'test/db/pglite-template.test.ts',
  'test/db/socket-auth.test.ts',
  'test/infra/llm-api-key.test.ts',
  'test/infra/temporal-connection-options.test.ts',
  'test/mcp/stdio-transport.test.ts',
  'test/search/search-command.test.ts',
  'test/cli/changes-command.test.ts',
  'test/cli/quiet-commands.test.ts',
  'test/cli/listen-address.test.ts',
  // `gleaner mcp` as a child process on an embedded store; the API's /mcp in process. No Temporal.
  'test/mcp/mcp-stdio.test.ts',
  'test/mcp/mcp-http.test.ts',
  // A native Postgres as a child process, and no Temporal.
  'test/search/hybrid-search.test.ts',
  'test/search/unique-token-ranking.test.ts',
  'test/search/context.test.ts',
  'test/search/search-params-domain.test.ts',
  'test/db/vector.test.ts',
  'test/db/change-events.test.ts',
  'test/db/pg-database.test.ts',
  'test/api/metrics-cache.test.ts',
  'test/infra/native-postgres.test.ts',
  'test/infra/native-postgres-env.test.ts',
  'test/db/pglite-artifacts.test.ts',
  'test/workers/workflow-sources.test.ts',
];

/**
 * Integration files that must not run beside another integration file: each one here says why.
 * They run after the other integration files, one at a time, in one process (vitest still loads
 * each file's modules afresh).
 */
const SERIAL: string[] = [
  // Each crawls and embeds a whole site (skopt, or a generated one) under a fault or a count, and ran
  // past its 300 s timeout beside another integration file on a machine at load ~24: crash-recovery
  // (kills a worker, stops and restarts Temporal), db-outage (stops Postgres), crawl-site and
  // search-recall (skopt). Quiet, each takes 70-120 s alone.
  'test/integration/crash-recovery.test.ts',
  'test/integration/db-outage.test.ts',
  'test/integration/crawl-site.test.ts',
  'test/integration/search-recall.test.ts',
  // Measures the healthy origin's pace from its server's log (no gap above 5 s). Beside render-pool
  // (Chromium, 50 pages) and the PGlite template builds, at load ~10, its largest gap read 4.3-5.1 s
  // with and without the change under test and 7.7 s in a CI run; alone, 1.0-1.4 s. Beside them it
  // measures its neighbours, not the crawler.
  'test/integration/hostile-lab.test.ts',
];

export default defineConfig({
  test: {
    // Vitest 3.2 sizes each pool (forks, threads) from the root config and shares it across the
    // projects that use it; a project's own fileParallelism does not limit it. So the pools are
    // sized here: one thread for the unit lane, two forks for the integration lane (its files
    // mostly wait on polite delays, Temporal timers and backoff, so two of them share the two
    // cores with the unit lane well). The timed lane runs on the one thread, after the others.
    poolOptions: {
      threads: { maxThreads: 1, minThreads: 1 },
      forks: { maxForks: 2, minForks: 1 },
    },
    // Longest first, from known durations when there is no earlier run (CI's fresh clone).
    sequence: { sequencer: LongestFirstSequencer },
    // A skopt crawl runs the whole page pipeline (extract, chunk, embed ~700 chunks on two cores).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          exclude: TIMED,
          pool: 'threads',
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...UNIT, ...TIMED, ...SERIAL],
          // Integration files start real servers and kill processes: each in a process of its own,
          // two at a time. Each starts its own Temporal dev server, Postgres, sites and receivers
          // on free ports, under its own temp dirs, and kills only what it started.
          pool: 'forks',
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL.length > 0 ? SERIAL : ['no-serial-files'],
          pool: 'forks',
          // The forks pool runs a singleFork project's files after the others, one at a time.
          poolOptions: { forks: { singleFork: true } },
        },
      },
      {
        extends: true,
        test: {
          name: 'timed',
          include: TIMED,
          // The one thread: after the unit and integration lanes, one file at a time.
          pool: 'threads',
          // Projects of one group run at the same time; a later group starts when it is done.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
