/**
 * `gleaner api` beside a running gleaner process attaches to it: it reads the store through that
 * process's socket. When that process stops, the socket goes with it (and a restarted one listens
 * on another port), so the attached API says so and exits instead of answering 503 for good, as it
 * did before. This test process plays the running gleaner: it holds the store and serves it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { spawnGleaner, waitFor } from '../../testbed/gleaner-process';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

let home: string;
let api: ChildProcess | undefined;

beforeAll(() => {
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-attached-api-'));
});

afterAll(() => {
  // Also when the test failed or timed out: its Temporal dev server goes with it.
  if (api && api.exitCode === null) api.kill('SIGKILL');
  rmSync(home, { recursive: true, force: true });
});

describe('gleaner api attached to a running gleaner process', () => {
  it('serves through its socket, then exits naming the process once that process has stopped', async () => {
    const holder = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata') });
    let holderOpen = true;
    await migrate(holder);
    // What a `gleaner dev` says of itself once it serves (infra/runtime.ts): later processes attach.
    holder.updateLock({ serving: true });
    api = spawnGleaner(['api', '--port', '0'], { GLEANER_HOME: home, GLEANER_LOG_LEVEL: 'warn' });
    let stderr = '';
    const child = api;
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null | 'still running'>((resolve) => {
      child.on('exit', (code) => resolve(code));
      // It checks every second; a minute is room for a loaded machine, not a timing claim.
      setTimeout(() => resolve('still running'), 60_000).unref();
    });
    try {
      await waitFor(() => /listening on (http:\/\/\S+)/.test(stderr), 120_000, 'gleaner api to listen').catch(
        (error: Error) => {
          throw new Error(`${error.message}; its stderr: ${stderr}`);
        },
      );
      const url = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
      const health = await fetch(`${url}/healthz`);
      expect((await health.json()) as { database: { up: boolean } }).toMatchObject({
        database: { up: true },
      });

      await holder.close();
      holderOpen = false;
      // Before, it went on answering 503 ("unreachable: database") until someone stopped it.
      expect(await exited).toBe(2);
      expect(stderr).toContain(`the gleaner process this API attached to (pid ${process.pid}) has stopped`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      if (holderOpen) await holder.close();
    }
  });
});
