/**
 * A browser must never outlive the worker that launched it: if the worker is killed (SIGKILL, OOM)
 * no `finally` and no exit hook runs, and Chromium with its renderers would stay behind. So next to
 * each browser we start a tiny detached shell that waits for either the worker or the browser's
 * process group to go, then kills the whole group.
 */
import { spawn } from 'node:child_process';

const WATCHDOG_SCRIPT = [
  // $1: the worker's pid; $2: the browser's process-group id. No `--` before "-$2": dash (Debian's
  // /bin/sh) rejects it ("Illegal number: -"), which made the loop end at once and the watchdog
  // exit without killing anything; after a signal option, "-N" is a process group in every sh.
  'while kill -0 "$1" 2>/dev/null && kill -0 "-$2" 2>/dev/null; do sleep 0.5; done',
  'kill -KILL "-$2" 2>/dev/null',
  'exit 0',
].join('\n');

/** Starts the watchdog for one browser process group; returns its pid. It exits by itself. */
export function watchProcessGroup(groupId: number, ownerPid: number = process.pid): number | undefined {
  const watchdog = spawn(
    '/bin/sh',
    ['-c', WATCHDOG_SCRIPT, 'gleaner-browser-watchdog', String(ownerPid), String(groupId)],
    {
      detached: true,
      stdio: 'ignore',
    },
  );
  watchdog.unref();
  return watchdog.pid;
}

/** Kills a whole process group at once; a group already gone is fine. */
export function killProcessGroup(groupId: number): void {
  try {
    process.kill(-groupId, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
