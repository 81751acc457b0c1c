/**
 * The process logger: pino, JSON to stderr (stdout stays free for `--json` output), level from
 * GLEANER_LOG_LEVEL. Components take child loggers.
 */
import pino from 'pino';

export const logger = pino(
  { level: process.env.GLEANER_LOG_LEVEL ?? 'info', base: { pid: process.pid } },
  pino.destination({ fd: 2, sync: false }),
);

export type Logger = pino.Logger;
