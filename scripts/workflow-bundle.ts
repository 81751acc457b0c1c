/**
 * Builds the Temporal workflow bundle into its cache (workers/workflow-bundle.ts, node_modules/.cache),
 * unless the current one is there already, so a new user's first `gleaner crawl` or `npm run demo` does
 * not spend its start-up on webpack: a first run on a fresh checkout reached its first request after
 * 6.3-7.2 s instead of 3.2-4.4 s (bench:pipeline, session 29). Run by scripts/setup.sh; quick when current.
 */
import { workflowBundle } from '../workers/workflow-bundle';

const started = Date.now();
try {
  const bundle = await workflowBundle();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    `workflow bundle ready (${Math.round(bundle.code.length / 1024)} KiB, ${seconds} s)\n`,
  );
} catch (error) {
  process.stderr.write(`could not build the workflow bundle: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
