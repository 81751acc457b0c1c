#!/usr/bin/env node
// Starts the CLI from its compiled build in dist/cli/ (scripts/build-cli.ts, run by setup) when that
// build is current: going through tsx's loader cost every command ~0.5-1 s of CPU before it did
// anything. With a missing or stale build (a source edited since), or GLEANER_NO_BUILD=1, it runs the
// TypeScript sources through tsx, so an edit never needs a build step to take effect.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { currentBuild } from './current-build.js';

// The commands a person watches in a terminal show progress and results; their JSON logs go to a
// file under GLEANER_HOME instead (the crawl prints its path). --verbose or GLEANER_LOG_LEVEL keeps
// them on stderr; the long-running services (dev, api, worker) always log to stderr.
const QUIET_COMMANDS = new Set([
  'crawl',
  'resume',
  'status',
  'search',
  'context',
  'changes',
  'export',
  'report',
  'pause',
  'cancel',
  'robots',
  'extract',
  // `schedule trigger` runs the workers here on the embedded default, like `crawl`.
  'schedule',
]);
const verbose = process.argv.includes('--verbose');
if (verbose) process.argv = process.argv.filter((arg) => arg !== '--verbose');
if (
  !verbose &&
  !process.env.GLEANER_LOG_LEVEL &&
  !process.env.GLEANER_LOG_FILE &&
  QUIET_COMMANDS.has(process.argv[2])
) {
  process.env.GLEANER_LOG_FILE = path.join(
    path.resolve(process.env.GLEANER_HOME ?? '.gleaner'),
    'logs',
    'gleaner.log',
  );
}

const compiled = process.env.GLEANER_NO_BUILD === '1' ? undefined : currentBuild();
if (compiled) {
  // Worker threads load their bodies from the same build (infra/thread-body.mjs).
  process.env.GLEANER_CLI_DIST = path.dirname(compiled);
  await import(pathToFileURL(compiled).href);
} else {
  // Set by a compiled gleaner that started this one: its threads would load that build.
  delete process.env.GLEANER_CLI_DIST;
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
