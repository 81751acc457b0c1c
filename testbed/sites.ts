/** The real documentation sites in fixtures/sites (see its README), unpacked once per machine. */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../infra/tools-dir';

export const SITES_DIR = path.join(repoRoot(), 'fixtures', 'sites');

/** Unpacks `<name>.tar.gz` (e.g. `skopt-0.9`) and returns the folder holding its files. */
export function unpackSite(name: string): string {
  const archive = path.join(SITES_DIR, `${name}.tar.gz`);
  // Keyed by the archive's content, so a changed fixture is never served from an older unpacking.
  const digest = createHash('sha256').update(readFileSync(archive)).digest('hex').slice(0, 12);
  const target = path.join(os.tmpdir(), 'gleaner-sites', `${name}-${digest}`);
  if (!existsSync(path.join(target, '.complete'))) {
    const staging = `${target}.${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    execFileSync('tar', ['-xzf', archive, '-C', staging]);
    execFileSync('touch', [path.join(staging, '.complete')]);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(path.dirname(target), { recursive: true });
    renameSync(staging, target);
  }
  // Archives hold one top folder; serve from inside it.
  const entries = readdirSync(target).filter((entry) => !entry.startsWith('.'));
  return entries.length === 1 && entries[0] ? path.join(target, entries[0]) : target;
}
