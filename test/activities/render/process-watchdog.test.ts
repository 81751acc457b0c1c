/**
 * The browser watchdog kills a whole process group when the process that owns it dies, with the
 * system's own /bin/sh (dash on Debian). A detached `sleep` stands in for Chromium's group and a
 * second `sleep` for the worker that would be SIGKILLed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { watchProcessGroup } from '../../../activities/render/process-watchdog';
import { processesInGroups, waitForNoProcesses, watchdogsFor } from '../../../testbed/process-groups';

const started: ChildProcess[] = [];

function startSleep(detached: boolean): ChildProcess {
  const child = spawn('sleep', ['60'], { detached, stdio: 'ignore' });
  started.push(child);
  return child;
}

afterEach(() => {
  for (const child of started.splice(0)) {
    try {
      if (child.pid) process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

describe('watchProcessGroup', () => {
  it('kills the watched group once its owner dies, then exits', async () => {
    const browser = startSleep(true);
    const owner = startSleep(false);
    const group = browser.pid as number;
    const watchdog = watchProcessGroup(group, owner.pid);
    expect(watchdog).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    // While the owner lives, the group and its watchdog live.
    expect(processesInGroups([group])).toContain(group);
    expect(watchdogsFor([group])).toEqual([watchdog]);

    owner.kill('SIGKILL');
    expect(await waitForNoProcesses([group], 5_000)).toEqual([]);
  });

  it('exits by itself when the group ends first, leaving the owner alone', async () => {
    const browser = startSleep(true);
    const owner = startSleep(false);
    const group = browser.pid as number;
    watchProcessGroup(group, owner.pid);
    browser.kill('SIGKILL');
    expect(await waitForNoProcesses([group], 5_000)).toEqual([]);
    expect(owner.exitCode).toBeNull();
  });
});
