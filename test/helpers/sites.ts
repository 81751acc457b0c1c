/** The real documentation sites from ../shared/sites, unpacked once per machine for tests. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../infra/tools-dir';

/** `../shared/sites` beside the checkout, or two levels up from a worktree under `wt/<name>`. */
export const SHARED_SITES =
  [
    path.resolve(repoRoot(), '..', 'shared', 'sites'),
    path.resolve(repoRoot(), '..', '..', 'shared', 'sites'),
  ].find((dir) => existsSync(dir)) ?? path.resolve(repoRoot(), '..', 'shared', 'sites');

/** Unpacks `<name>.tar.gz` (e.g. `skopt-0.9`) and returns the folder holding its files. */
export function unpackSite(name: string): string {
  const target = path.join(os.tmpdir(), 'gleaner-sites', name);
  if (!existsSync(path.join(target, '.complete'))) {
    const staging = `${target}.${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    execFileSync('tar', ['-xzf', path.join(SHARED_SITES, `${name}.tar.gz`), '-C', staging]);
    execFileSync('touch', [path.join(staging, '.complete')]);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(path.dirname(target), { recursive: true });
    renameSync(staging, target);
  }
  // Archives hold one top folder; serve from inside it.
  const entries = readdirSync(target).filter((entry) => !entry.startsWith('.'));
  return entries.length === 1 && entries[0] ? path.join(target, entries[0]) : target;
}
