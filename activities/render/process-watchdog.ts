/**
 * A browser must never outlive the worker that launched it: if the worker is killed (SIGKILL, OOM)
 * no `finally` and no exit hook runs, and Chromium with its renderers would stay behind. So next to
 * each browser we start a tiny detached shell that waits for either the worker or the browser's
 * process group to go, then kills the whole group and removes the browser's folders (its profile,
 * its temp folder): nothing else would, and a worker that restarts its browser for weeks would
 * leave one behind per launch.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const WATCHDOG_SCRIPT = [
  // $1: the worker's pid; $2: the browser's process-group id. No `--` before "-$2": dash (Debian's
  // /bin/sh) rejects it ("Illegal number: -"), which made the loop end at once and the watchdog
  // exit without killing anything; after a signal option, "-N" is a process group in every sh.
  'while kill -0 "$1" 2>/dev/null && kill -0 "-$2" 2>/dev/null; do sleep 0.5; done',
  'kill -KILL "-$2" 2>/dev/null',
  // $3…: the folders to remove once the group is gone.
  'shift 2',
  'if [ "$#" -gt 0 ]; then rm -rf -- "$@"; fi',
  'exit 0',
].join('\n');

/**
 * Starts the watchdog for one browser process group; returns its pid. It exits by itself, after
 * removing `leftovers` (absolute paths of folders that belong to that browser alone).
 */
export function watchProcessGroup(
  groupId: number,
  ownerPid: number = process.pid,
  leftovers: readonly string[] = [],
): number | undefined {
  for (const folder of leftovers)
    if (!path.isAbsolute(folder)) throw new Error(`watchProcessGroup: ${folder} is not an absolute path`);
  const watchdog = spawn(
    '/bin/sh',
    ['-c', WATCHDOG_SCRIPT, 'gleaner-browser-watchdog', String(ownerPid), String(groupId), ...leftovers],
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
