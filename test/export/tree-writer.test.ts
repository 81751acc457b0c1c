/**
 * The tree writer across two exports: a page renamed since the last export does not fail because a
 * stale file (or folder of stale files) of that export stands where it now goes, and the counts of
 * written and unchanged files are honest.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TreeWriter } from '../../export/tree-writer';

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
