import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../infra/tools-dir';
import { workflowSourceFiles, workflowSourceHash } from '../../workers/workflow-sources';

describe('the workflow bundle cache key', () => {
  const copy = mkdtempSync(path.join(os.tmpdir(), 'gleaner-wf-sources-'));
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('covers the files workflows import from domain/ subfolders', () => {
    const files = workflowSourceFiles(repoRoot()).map((file) => path.relative(repoRoot(), file));
    expect(files).toContain(path.join('domain', 'politeness', 'clock.ts'));
    expect(files).toContain(path.join('workflows', 'crawl-workflow.ts'));
    expect(files).toContain('package-lock.json');
  });

  it('changes when a politeness module changes, so a stale bundle is never reused', () => {
    for (const part of ['workflows', 'domain', 'activities', 'workers'])
      cpSync(path.join(repoRoot(), part), path.join(copy, part), { recursive: true });
    cpSync(path.join(repoRoot(), 'package-lock.json'), path.join(copy, 'package-lock.json'));
    const before = workflowSourceHash(copy);
    expect(workflowSourceHash(copy)).toBe(before);
    writeFileSync(path.join(copy, 'domain', 'politeness', 'clock.ts'), '// edited\n', { flag: 'a' });
    expect(workflowSourceHash(copy)).not.toBe(before);
  });
});
