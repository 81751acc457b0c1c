/**
 * Which files make up the workflow bundle, and their hash: the key of the bundle cached on disk
 * (workers/workflow-bundle.ts). Kept apart from the bundler so it loads without the Temporal SDK.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Every file the bundle can contain, and the files that shape how it is built. */
export function workflowSourceFiles(root: string): string[] {
  const files: string[] = [
    path.join(root, 'package-lock.json'),
    path.join(root, 'activities', 'types.ts'),
    // The bundler options are part of what the bundle is.
    path.join(root, 'workers', 'workflow-bundle.ts'),
  ];
  // Recursive: workflows import domain/politeness/ too, and a bundle cached from old sources there
  // would run stale politeness code without a word.
  for (const dir of ['workflows', 'domain']) {
    const names = readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' });
    for (const name of names.sort()) {
      if (name.endsWith('.ts')) files.push(path.join(root, dir, name));
    }
  }
  return files;
}

export function workflowSourceHash(root: string): string {
  const hash = createHash('sha256');
  for (const file of workflowSourceFiles(root)) {
    hash.update(path.relative(root, file));
    hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 24);
}
