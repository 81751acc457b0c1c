/**
 * The process logger: pino JSON, level from GLEANER_LOG_LEVEL (default info). Records go to stderr
 * (stdout stays free for `--json` output), or to the file GLEANER_LOG_FILE names: bin/gleaner.js
 * sets it for the interactive commands so their terminal shows progress and results only.
 * Components take child loggers.
 */
import { mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';

export const LOG_FILE = process.env.GLEANER_LOG_FILE || undefined;

function destination(): pino.DestinationStream {
  if (LOG_FILE) {
    mkdirSync(path.dirname(LOG_FILE), { recursive: true });
    // Opened here, not by pino: a destination still opening its file throws "sonic boom is not ready
    // yet" from pino's exit hook when a usage error exits at once.
    return pino.destination({ fd: openSync(LOG_FILE, 'a'), sync: false });
  }
  return pino.destination({ fd: 2, sync: false });
}

export const logger = pino(
  { level: process.env.GLEANER_LOG_LEVEL ?? 'info', base: { pid: process.pid } },
  destination(),
);

export type Logger = pino.Logger;
