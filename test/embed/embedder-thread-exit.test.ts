/**
 * A process that exits while its model thread is still loading: process.exit stopped the thread
 * inside onnxruntime-node's load, which aborted the process (`terminate called after throwing an
 * instance of 'Napi::Error'`, exit 134) instead of exiting with its own status. stopEmbedderThreads,
 * which cli/main.ts awaits before every exit, lets the load end first. The window is a few hundred
 * milliseconds wide somewhere in the load, so the exit is tried at a spread of moments.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const THREAD_MODULE = new URL('../../embed/embedder-thread.ts', import.meta.url).href;
let dir: string;
let script: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-thread-exit-'));
  script = path.join(dir, 'exit-while-loading.mts');
  writeFileSync(
    script,
    [
      `import { sharedEmbedderThread, stopEmbedderThreads } from ${JSON.stringify(THREAD_MODULE)};`,
      'sharedEmbedderThread().catch(() => {});',
      'await new Promise((resolve) => setTimeout(resolve, Number(process.argv[2])));',
      'await stopEmbedderThreads();',
      'process.exit(3);',
      '',
    ].join('\n'),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('stopEmbedderThreads', () => {
  it('lets a process exit with its own status while its model thread loads', () => {
    for (let delayMs = 0; delayMs <= 900; delayMs += 150) {
      const run = spawnSync(process.execPath, ['--import', 'tsx', script, String(delayMs)], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.error).toBeUndefined();
      expect(run.stderr, `exit after ${delayMs} ms`).not.toMatch(/Napi|terminate called/);
      expect({ delayMs, signal: run.signal, status: run.status }).toEqual({
        delayMs,
        signal: null,
        status: 3,
      });
    }
  }, 120_000);

  it('returns at once when no thread runs', async () => {
    const { stopEmbedderThreads } = await import('../../embed/embedder-thread');
    const started = performance.now();
    await stopEmbedderThreads();
    expect(performance.now() - started).toBeLessThan(50);
  });
});
