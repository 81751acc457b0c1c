#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so there is no build step between a clone and a crawl.
// `gleaner search` starts from the compiled CLI in dist/cli/ (scripts/build-cli.ts, run by setup)
// when that build is current: transpiling through tsx cost a cold search ~0.5 s of CPU.
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
  'pause',
  'cancel',
  'robots',
  'extract',
]);
// Commands run from the compiled CLI when it is current. Only `search` for now: it is the one a
// person waits on over and over, and its tests run it this way.
const COMPILED_COMMANDS = new Set(['search']);

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

// GLEANER_NO_BUILD=1 always runs the sources.
const compiled =
  COMPILED_COMMANDS.has(process.argv[2]) && process.env.GLEANER_NO_BUILD !== '1' ? currentBuild() : undefined;
if (compiled) {
  // Worker threads started by the compiled CLI (embed/embedder-thread-entry.mjs) load from the same build.
  process.env.GLEANER_CLI_DIST = path.dirname(compiled);
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
