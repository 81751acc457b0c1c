/**
 * `mkdir -p` that cannot spin. Node 20's `mkdir(dir, { recursive: true })` loops for ever (a core
 * busy in the kernel, never an answer) when the folder's parent exists but refuses the new name with
 * ENOENT, as /proc and /sys do: `gleaner export --out /proc/x` and `GLEANER_HOME=/proc/x` hung.
 * Here the missing folders are made one at a time from the deepest one that exists, so such a
 * refusal is an error that names the folder.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { RuntimeError } from './gleaner-home';

function refused(folder: string, error: unknown): Error | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  // Another process made it meanwhile: that is what was wanted.
  if (code === 'EEXIST') return undefined;
  return new RuntimeError(`cannot create the folder ${folder}: ${code ?? String(error)}`, { cause: error });
}

export function makeFoldersSync(dir: string, mode?: number): void {
  const missing: string[] = [];
  for (let current = path.resolve(dir); !existsSync(current); current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const folder of missing) {
    try {
      mkdirSync(folder, { mode });
    } catch (error) {
      const failure = refused(folder, error);
      if (failure) throw failure;
    }
  }
}

export async function makeFolders(dir: string, mode?: number): Promise<void> {
  const exists = (folder: string) =>
    stat(folder).then(
      () => true,
      () => false,
    );
  const missing: string[] = [];
  for (let current = path.resolve(dir); !(await exists(current)); current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const folder of missing) {
    try {
      await mkdir(folder, { mode });
    } catch (error) {
      const failure = refused(folder, error);
      if (failure) throw failure;
    }
  }
}
