/**
 * The browser watchdog kills a whole process group when the process that owns it dies, with the
 * system's own /bin/sh (dash on Debian). A detached `sleep` stands in for Chromium's group and a
 * second `sleep` for the worker that would be SIGKILLed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

  it("removes the browser's folders once the group is gone, whichever way it went", async () => {
    // A name with a space and a leading dash: the folders reach rm as arguments, never as options.
    const folder = (name: string) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), name));
      mkdirSync(path.join(dir, 'nested'));
      writeFileSync(path.join(dir, 'nested', 'SingletonSocket'), 'x');
      return dir;
    };
    const byOwner = [folder('-gleaner watchdog a-'), folder('gleaner-watchdog-b-')];
    const byGroup = [folder('gleaner-watchdog-c-')];
    const keep = folder('gleaner-watchdog-keep-');

    const ownedBrowser = startSleep(true);
    const owner = startSleep(false);
    watchProcessGroup(ownedBrowser.pid as number, owner.pid, byOwner);
    const endingBrowser = startSleep(true);
    watchProcessGroup(endingBrowser.pid as number, process.pid, byGroup);
    await new Promise((resolve) => setTimeout(resolve, 700));
    // Nothing is removed while the browser runs.
    expect([...byOwner, ...byGroup].filter(existsSync)).toHaveLength(3);

    owner.kill('SIGKILL');
    endingBrowser.kill('SIGKILL');
    const groups = [ownedBrowser.pid as number, endingBrowser.pid as number];
    expect(await waitForNoProcesses(groups, 5_000)).toEqual([]);
    expect([...byOwner, ...byGroup].filter(existsSync)).toEqual([]);
    expect(existsSync(keep)).toBe(true);
    rmSync(keep, { recursive: true });
  });

  it('refuses a relative folder: rm must never run against the working directory', () => {
    expect(() => watchProcessGroup(1, process.pid, ['tmp/profile'])).toThrow(/not an absolute path/);
  });
});
