/**
 * A page thread that dies outside any task must not take the process with it. Piscina (5.3) emits
 * 'error' on the pool when a thread errors while it holds no task: a deadline aborted the page (its
 * task is gone) and the thread ran out of heap before it was terminated. With no listener that
 * error is thrown, and it killed a whole recrawl (ERR_WORKER_OUT_OF_MEMORY). The race itself cannot
 * be timed from a test, so the pool is sent the error Piscina sends, as `_onError` does.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { threadPool } from '../../activities/page-analysis-pool';

const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-page-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The listener logs the error (a warn line naming the thread file); the pool starts a fresh thread.
describe('a page thread pool', () => {
  it('logs a thread error that belongs to no task, and goes on running tasks', async () => {
    const file = path.join(dir, 'answer.mjs');
    writeFileSync(file, 'export default (n) => n * 2;\n');
    const pool = threadPool<number, number>(pathToFileURL(file).href, 1);
    try {
      expect(await pool.run(2)).toBe(4);
      const outOfMemory = Object.assign(
        new Error('Worker terminated due to reaching memory limit: JS heap out of memory'),
        { code: 'ERR_WORKER_OUT_OF_MEMORY' },
      );
      // Before, this threw: an 'error' event with no listener.
      expect(() => pool.emit('error', outOfMemory)).not.toThrow();
      expect(pool.listenerCount('error')).toBe(1);
      expect(await pool.run(21)).toBe(42);
    } finally {
      await pool.destroy();
    }
  });
});
