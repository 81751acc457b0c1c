/**
 * infra/make-folders.ts: `mkdir -p` that answers. Node 20's own recursive mkdir never returns for a
 * folder under /proc (its parent exists, the name is refused with ENOENT, and it tries again).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeFolders, makeFoldersSync } from '../../infra/make-folders';

const root = mkdtempSync(path.join(os.tmpdir(), 'gleaner-make-folders-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('makeFolders', () => {
  it('makes every missing folder, with the mode asked for, and accepts one that exists', async () => {
    const deep = path.join(root, 'a', 'b', 'c');
    await makeFolders(deep, 0o700);
    expect(statSync(deep).isDirectory()).toBe(true);
    expect(statSync(path.join(root, 'a')).mode & 0o777).toBe(0o700);
    await makeFolders(deep);
    makeFoldersSync(path.join(root, 'a', 'd'), 0o700);
    makeFoldersSync(path.join(root, 'a', 'd'));
    expect(statSync(path.join(root, 'a', 'd')).mode & 0o777).toBe(0o700);
  });

  it('names the folder the system refuses instead of spinning', async () => {
    expect(() => makeFoldersSync('/proc/gleaner-x/y')).toThrow(
      /^cannot create the folder \/proc\/gleaner-x: ENOENT$/,
    );
    await expect(makeFolders('/proc/gleaner-x')).rejects.toThrow(
      /^cannot create the folder \/proc\/gleaner-x: ENOENT$/,
    );
  });

  it('names a file standing where a folder is wanted', async () => {
    const file = path.join(root, 'file');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, 'x'));
    await expect(makeFolders(path.join(file, 'sub'))).rejects.toThrow(
      /cannot create the folder .*file\/sub: ENOTDIR/,
    );
  });
});
