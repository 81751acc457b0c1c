/**
 * The process logger: pino JSON, level from GLEANER_LOG_LEVEL (default info). Records go to stderr
 * (stdout stays free for `--json` output), or to the file GLEANER_LOG_FILE names: bin/gleaner.js
 * sets it for the interactive commands so their terminal shows progress and results only.
 * Components take child loggers.
 *
 * pino is loaded on the first use of the logger, not on import: every command imports this module,
 * most short ones never log, and loading pino cost ~40 ms of a process's start on a two-core AVX2
 * machine (`farm-bench --vs 'node -e 0' -- node -e "require('pino')"`: 0.164 s against 0.120 s CPU),
 * a fifth of `gleaner --version`.
 */
import { openSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type pino from 'pino';
import { makeFoldersSync } from './make-folders';

export const LOG_FILE = process.env.GLEANER_LOG_FILE || undefined;

function destination(create: typeof pino): pino.DestinationStream {
  if (LOG_FILE) {
    makeFoldersSync(path.dirname(LOG_FILE));
    // Opened here, not by pino: a destination still opening its file throws "sonic boom is not ready
    // yet" from pino's exit hook when a usage error exits at once.
    return create.destination({ fd: openSync(LOG_FILE, 'a'), sync: false });
  }
  return create.destination({ fd: 2, sync: false });
}

let instance: pino.Logger | undefined;

function processLogger(): pino.Logger {
  if (!instance) {
    const create = createRequire(import.meta.url)('pino') as typeof pino;
    instance = create(
      { level: process.env.GLEANER_LOG_LEVEL ?? 'info', base: { pid: process.pid } },
      destination(create),
    );
  }
  return instance;
}

/** Stands for the pino logger, created on its first use; methods are bound to it. */
export const logger: pino.Logger = new Proxy({} as pino.Logger, {
  get(_target, property) {
    const real = processLogger();
    const value: unknown = Reflect.get(real, property, real);
    return typeof value === 'function' ? value.bind(real) : value;
  },
  set(_target, property, value) {
    return Reflect.set(processLogger(), property, value);
  },
  has(_target, property) {
    return Reflect.has(processLogger(), property);
  },
});

export type Logger = pino.Logger;
