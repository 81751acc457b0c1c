/**
 * The default embedder run on a worker thread (what `gleaner search` uses): the same identity and
 * the same vectors as in process, a clear error when the model cannot be loaded, and no embeds after
 * close.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDefaultEmbedder } from '../../embed/embedder';
import {
  closeSharedEmbedderThread,
  loadEmbedderInThread,
  sharedEmbedderThread,
  sharedThreadEmbedder,
  type ThreadedEmbedder,
} from '../../embed/embedder-thread';

let threaded: ThreadedEmbedder | undefined;
afterEach(async () => {
  await threaded?.close();
  threaded = undefined;
  await closeSharedEmbedderThread();
});

describe('loadEmbedderInThread', () => {
  it('embeds exactly as the in-process embedder does', async () => {
    threaded = await loadEmbedderInThread();
    const local = await loadDefaultEmbedder();
    expect(threaded.identity).toEqual(local.identity);
    const texts = ['how do I stop the optimization when a time budget runs out', 'Bayesian optimisation'];
    const [fromThread, inProcess] = await Promise.all([
      threaded.embed(texts, 'query'),
      local.embed(texts, 'query'),
    ]);
    expect(fromThread).toHaveLength(2);
    for (const [i, vector] of fromThread.entries())
      expect(Array.from(vector)).toEqual(Array.from(inProcess[i] ?? []));
  });

  it('embeds texts asked for ahead once the model loads, and answers the same as asked afterwards', async () => {
    const query = 'how do I stop the optimization when a time budget runs out';
    threaded = await loadEmbedderInThread(undefined, { texts: [query], kind: 'query' });
    const local = await loadDefaultEmbedder();
    const [expected] = await local.embed([query], 'query');
    const [ahead] = await threaded.embed([query], 'query');
    // Taken once: the same texts again are a request of their own, and other texts are unaffected.
    const [again] = await threaded.embed([query], 'query');
    const [other] = await threaded.embed(['Bayesian optimisation'], 'query');
    expect(Array.from(ahead ?? [])).toEqual(Array.from(expected ?? []));
    expect(Array.from(again ?? [])).toEqual(Array.from(expected ?? []));
    expect(Array.from(other ?? [])).not.toEqual(Array.from(expected ?? []));
  });

  it('lets a request it is running finish when closed, instead of aborting the process', async () => {
    // The request made ahead runs as soon as the model is loaded: closing right then stopped the
    // thread inside onnxruntime's run, which aborted the whole process (exit 134; vitest's worker here).
    threaded = await loadEmbedderInThread(undefined, { texts: ['closed while embedding'], kind: 'query' });
    await threaded.close();
    const [vector] = await threaded.embed(['closed while embedding'], 'query');
    expect(vector).toHaveLength(threaded.identity.dimension);
    await expect(threaded.embed(['asked after the close'])).rejects.toThrow(/closed/);
  });

  it('fails pending and later embeds once closed', async () => {
    threaded = await loadEmbedderInThread();
    await threaded.close();
    await expect(threaded.embed(['anything'])).rejects.toThrow(/closed/);
  });

  it('rejects with the reason when the model cannot be loaded', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'gleaner-no-model-'));
    const before = process.env.GLEANER_MODEL_DIR;
    process.env.GLEANER_MODEL_DIR = empty;
    try {
      await expect(loadEmbedderInThread()).rejects.toThrow(/model/i);
      // A request made ahead fails with the load and is no unhandled rejection (vitest reports those).
      await expect(
        loadEmbedderInThread(undefined, { texts: ['never embedded'], kind: 'query' }),
      ).rejects.toThrow(/model/i);
    } finally {
      if (before === undefined) delete process.env.GLEANER_MODEL_DIR;
      else process.env.GLEANER_MODEL_DIR = before;
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('sharedEmbedderThread, the pipeline model thread', () => {
  it('is one thread for every caller, and a new one after it ends', async () => {
    const [first, again] = await Promise.all([sharedEmbedderThread(), sharedEmbedderThread()]);
    expect(again).toBe(first);
    const [vector] = await first.embed(['shared thread']);
    expect(vector).toHaveLength(first.identity.dimension);
    await first.close();
    await expect(first.embed(['after the end'])).rejects.toThrow(/closed/);
    // The ended thread is forgotten: the next caller (a retried activity) gets a working one.
    const next = await sharedEmbedderThread();
    expect(next).not.toBe(first);
    const [after] = await next.embed(['shared thread']);
    expect(Array.from(after ?? [])).toEqual(Array.from(vector ?? []));
  });

  it("gives the API an embedder that outlives the thread's end", async () => {
    const embedder = await sharedThreadEmbedder();
    const thread = await sharedEmbedderThread();
    expect(embedder.identity).toEqual(thread.identity);
    const [before] = await embedder.embed(['a query'], 'query');
    // The thread ends (a crash, or closed): the embedder the search service keeps still answers.
    await thread.close();
    const [after] = await embedder.embed(['a query'], 'query');
    expect(await sharedEmbedderThread()).not.toBe(thread);
    expect(Array.from(after ?? [])).toEqual(Array.from(before ?? []));
  });

  it('keeps a process alive while it embeds, lets it exit when idle, and starts no onnxruntime telemetry', () => {
    // A script that awaits vectors and never closes the thread: it must print them (not exit under
    // its await) and then exit by itself (an idle model must not hold a finished command open).
    const script = `
      const { sharedEmbedderThread } = await import(${JSON.stringify(path.resolve('embed/embedder-thread.ts'))});
      const embedder = await sharedEmbedderThread();
      const [vector] = await embedder.embed(['keep me alive']);
      console.log('dimension', vector.length, 'pid', process.pid);
    `;
    // From a file: `-e` with --input-type would be inherited by the thread and refuse its entry.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-thread-alive-'));
    const file = path.join(dir, 'embed-once.mjs');
    writeFileSync(file, script);
    // Without an operator's say: onnxruntime's telemetry must be off by default.
    const { ORT_DISABLE_TELEMETRY: _, ...env } = process.env;
    const run = spawnSync(process.execPath, ['--import', 'tsx', file], {
      encoding: 'utf8',
      timeout: 60_000,
      env,
    });
    rmSync(dir, { recursive: true, force: true });
    expect(run.error).toBeUndefined();
    expect(run.signal).toBeNull();
    expect(run.stderr.trim().split('\n').slice(0, 8).join('\n')).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/dimension 384/);
    // onnxruntime's telemetry client leaves this file behind every process it starts in.
    const pid = /pid (\d+)/.exec(run.stdout)?.[1];
    expect(pid).toBeDefined();
    expect(existsSync(path.join('/tmp', `mat-debug-${pid}.log`))).toBe(false);
  });
});
