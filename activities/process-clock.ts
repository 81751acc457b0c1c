/**
 * This process's monotonic clock, named so a reading can travel through workflow history and be
 * trusted only by the process that took it (performance.now() never steps, but its zero is per process).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';

export const PROCESS_CLOCK_ID = randomUUID();

export function processClockMs(): number {
  return performance.now();
}
