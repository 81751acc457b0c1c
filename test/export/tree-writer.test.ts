/**
 * The tree writer across two exports: a page renamed since the last export does not fail because a
 * stale file (or folder of stale files) of that export stands where it now goes, and the counts of
 * written and unchanged files are honest. A file streamed in many large pieces leaves no listener
 * behind per piece, and a stream that fails fails the write waiting on it and every one after.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { pacedWrites, TreeWriter } from '../../export/tree-writer';

const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-tree-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function exportOnce(out: string, files: Record<string, string>): Promise<TreeWriter> {
  const writer = await TreeWriter.open(out);
  for (const [file, text] of Object.entries(files)) await writer.write(file, text);
  await writer.removeStale();
  await writer.finish();
  return writer;
}

describe('TreeWriter across exports', () => {
  it('replaces a stale file where a folder is now needed, and a stale folder where a file is', async () => {
    const out = path.join(dir, 'clash');
    await exportOnce(out, { 'h/a.md': 'page /a' });
    const second = await exportOnce(out, { 'h/a--0123456789.md': 'page /a', 'h/a.md/x.md': 'page /a.md/x' });
    expect(readFileSync(path.join(out, 'h/a.md/x.md'), 'utf8')).toBe('page /a.md/x');
    expect(second.counts).toEqual({ written: 2, unchanged: 0, removed: 1 });
    const third = await exportOnce(out, { 'h/a.md': 'page /a again' });
    expect(readFileSync(path.join(out, 'h/a.md'), 'utf8')).toBe('page /a again');
    expect(existsSync(path.join(out, 'h/a--0123456789.md'))).toBe(false);
    expect(third.counts).toEqual({ written: 1, unchanged: 0, removed: 2 });
    const fourth = await exportOnce(out, { 'h/a.md': 'page /a again' });
    expect(fourth.counts).toEqual({ written: 0, unchanged: 1, removed: 0 });
  });
});

describe('TreeWriter.stream', () => {
  it('writes a file of many pieces larger than the stream buffer without piling up listeners', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const writer = await TreeWriter.open(path.join(dir, 'streamed'));
      const file = await writer.stream('big.txt');
      const piece = 'x'.repeat(64 * 1024);
      for (let index = 0; index < 40; index++) await file.write(piece);
      await file.close();
      // Node reports the listener leak on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(readFileSync(path.join(dir, 'streamed', 'big.txt'), 'utf8').length).toBe(40 * piece.length);
      expect(writer.counts.written).toBe(1);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});

describe('pacedWrites', () => {
  /** A stream with a tiny buffer, so every write waits for drain, that fails its third write. */
  function failingStream(): Writable {
    let writes = 0;
    return new Writable({
      highWaterMark: 4,
      write(_chunk, _encoding, callback) {
        writes += 1;
        setImmediate(() => callback(writes === 3 ? new Error('disk full') : null));
      },
    });
  }

  it('keeps one error listener however many writes wait for drain', async () => {
    const stream = failingStream();
    const out = pacedWrites(stream);
    await out.write(Buffer.from('0123456789'));
    await out.write(Buffer.from('0123456789'));
    expect(stream.listenerCount('error')).toBe(1);
    expect(stream.listenerCount('drain')).toBe(1);
  });

  it('fails the write waiting when the stream fails, and every write and the end after it', async () => {
    const out = pacedWrites(failingStream());
    await out.write(Buffer.from('0123456789'));
    await out.write(Buffer.from('0123456789'));
    await expect(out.write(Buffer.from('0123456789'))).rejects.toThrow('disk full');
    await expect(out.write(Buffer.from('more'))).rejects.toThrow('disk full');
    await expect(out.end()).rejects.toThrow('disk full');
  });
});

describe('TreeWriter.copy', () => {
  it('copies a file, and leaves no temporary file behind when the source cannot be read', async () => {
    const out = path.join(dir, 'copied');
    const writer = await TreeWriter.open(out);
    const source = path.join(dir, 'source.bin');
    writeFileSync(source, Buffer.alloc(200_000, 7));
    await writer.copy('h/_assets/a.bin', source);
    expect(readFileSync(path.join(out, 'h/_assets/a.bin')).equals(readFileSync(source))).toBe(true);
    // A regular file by lstat whose read fails (EIO at offset 0): as a source that vanishes or a
    // disk that fails mid-copy would.
    await expect(writer.copy('h/_assets/b.bin', '/proc/self/mem')).rejects.toThrow(/EIO|input\/output/i);
    expect(readdirSync(path.join(out, 'h/_assets')).sort()).toEqual(['a.bin']);
  });
});
