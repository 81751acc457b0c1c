/**
 * The default embedder run on a worker thread (what `gleaner search` uses): the same identity and
 * the same vectors as in process, a clear error when the model cannot be loaded, and no embeds after
 * close.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDefaultEmbedder } from '../../embed/embedder';
import { loadEmbedderInThread, type ThreadedEmbedder } from '../../embed/embedder-thread';

let threaded: ThreadedEmbedder | undefined;
afterEach(async () => {
  await threaded?.close();
  threaded = undefined;
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
    } finally {
      if (before === undefined) delete process.env.GLEANER_MODEL_DIR;
      else process.env.GLEANER_MODEL_DIR = before;
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
