#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so there is no build step between a clone and a crawl.
import path from 'node:path';
import { register } from 'tsx/esm/api';

// The commands a person watches in a terminal show progress and results; their JSON logs go to a
// file under GLEANER_HOME instead (the crawl prints its path). --verbose or GLEANER_LOG_LEVEL keeps
// them on stderr; the long-running services (dev, api, worker) always log to stderr.
const QUIET_COMMANDS = new Set([
  'crawl',
  'resume',
  'status',
  'search',
  'pause',
  'cancel',
  'robots',
  'extract',
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

register();
await import('../cli/main.ts');
