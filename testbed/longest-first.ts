/**
 * Runs the longest test files first, so the last file to start is a short one and no worker of a
 * lane idles while another finishes a long fault test. Vitest's own order needs the durations of a
 * previous run (node_modules/.vite), which a fresh clone (CI) does not have; without them it keeps
 * the glob order, and a 170 s file started last made the run 170 s longer. So a file's last known
 * duration wins, and else the figure below (seconds, from a fresh-clone CI log), else 0.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds each long file took in a fresh-clone CI run; files under ~10 s need no entry. */
export const KNOWN_SECONDS: Readonly<Record<string, number>> = {
  'test/integration/fault-injection.test.ts': 170,
  'test/integration/webhooks.test.ts': 70,
  'test/integration/crash-recovery.test.ts': 121,
  'test/integration/frontier-spill.test.ts': 85,
  'test/integration/crawl-site.test.ts': 73,
  'test/integration/db-outage.test.ts': 71,
  'test/integration/search-recall.test.ts': 69,
  'test/integration/change-feed.test.ts': 60,
  'test/mcp/mcp-crawl.test.ts': 60,
  'test/integration/page-batches.test.ts': 53,
  'test/integration/backoff.test.ts': 48,
  'test/integration/schedules.test.ts': 47,
  'test/cli/embedded-schedule-trigger.test.ts': 43,
  'test/integration/render-pool.test.ts': 41,
  'test/integration/hostile-lab.test.ts': 38,
  'test/integration/export-site.test.ts': 37,
  'test/workflows/workflows.test.ts': 36,
  'test/api/api.test.ts': 35,
  'test/search/search-command.test.ts': 35,
  'test/integration/render-worker-kill.test.ts': 28,
  'test/integration/control.test.ts': 27,
  'test/integration/render.test.ts': 25,
  'test/integration/recrawl.test.ts': 23,
  'test/cli/bad-input.test.ts': 22,
  'test/integration/safety-lab.test.ts': 19,
  'test/workflows/replay.test.ts': 17,
  'test/api/schedule-routes.test.ts': 17,
  'test/integration/render-network.test.ts': 16,
  'test/cli/export-command.test.ts': 15,
  'test/db/pglite-store.test.ts': 15,
  'test/integration/two-origins.test.ts': 14,
  'test/cli/export-allow-hosts.test.ts': 14,
  'test/integration/trap-bound.test.ts': 12,
  'test/cli/temporal-cli-start.test.ts': 12,
  'test/cli/compiled-start.test.ts': 12,
  'test/integration/per-origin-concurrency.test.ts': 11,
  'test/integration/llm-summaries.test.ts': 11,
  'test/infra/temporal-cli.test.ts': 11,
  'test/activities/summarize-llm.test.ts': 11,
  'test/extract/extract-cli.test.ts': 11,
  'test/workflows/crawl-generations.test.ts': 10,
  'test/integration/robots.test.ts': 10,
  'test/search/hybrid-search.test.ts': 10,
};

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = (spec: TestSpecification): number => {
      const file = relative(root, spec.moduleId);
      const last = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      if (last && !last.failed) return last.duration / 1000;
      return KNOWN_SECONDS[file] ?? 0;
    };
    const failedBefore = (spec: TestSpecification): boolean =>
      this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(root, spec.moduleId)}`)?.failed ??
      false;
    // A file that failed last time first (as vitest does), then the longest first; ties keep glob order.
    return [...files].sort(
      (a, b) => Number(failedBefore(b)) - Number(failedBefore(a)) || seconds(b) - seconds(a),
    );
  }
}
