/**
 * The layering rules (.dependency-cruiser.cjs) catch what they say they catch: a scratch house of
 * tiny files, one forbidden import each plus imports every layer may make, checked by the same
 * depcruise run `npm run lint` makes. A rule that stops matching (a wrong path pattern, an exclude
 * that swallows a case) fails here instead of letting every violation through silently.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

/** File → source. Targets are one-liners so every import resolves and only the rule under test fires. */
const HOUSE: Record<string, string> = {
  // Targets.
  'cli/main.ts': 'export const main = 1;\n',
  'workers/run-workers.ts': 'export const startWorkers = 1;\n',
  'infra/logger.ts': 'export const logger = 1;\n',
  'workflows/messages.ts': 'export interface CrawlSummary { pages: number }\n',
  'activities/index.ts': 'export const createActivities = 1;\n',
  'activities/types.ts': 'export interface ActivityApi { run(): void }\n',
  'testbed/stack.ts': 'export const stack = 1;\n',
  'test/db/store.test.ts': 'export const probe = 1;\n',
  'domain/url.ts': 'export const canonical = 1;\n',
  'db/database.ts': 'export const db = 1;\n',

  // One forbidden import each.
  'domain/up.ts': "import { main } from '../cli/main';\nexport const x = main;\n",
  'infra/up.ts': "import { startWorkers } from '../workers/run-workers';\nexport const x = startWorkers;\n",
  'api/up.ts': "import { main } from '../cli/main';\nexport const x = main;\n",
  'db/up.ts': "import { logger } from '../infra/logger';\nexport const x = logger;\n",
  'activities/up.ts':
    "import type { CrawlSummary } from '../workflows/messages';\nexport type X = CrawlSummary;\n",
  'workflows/loads-activities.ts':
    "import { createActivities } from '../activities';\nexport const x = createActivities;\n",
  'workflows/io.ts': "import { logger } from '../infra/logger';\nexport const x = logger;\n",
  'domain/fs.ts': "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
  'workflows/pg.ts': "import pg from 'pg';\nexport const x = pg;\n",
  'bench/tests.ts': "import { probe } from '../test/db/store.test';\nexport const x = probe;\n",
  'cli/testbed.ts': "import { stack } from '../testbed/stack';\nexport const x = stack;\n",
  'activities/dev.ts': "import { describe } from 'vitest';\nexport const x = describe;\n",
  'activities/undeclared.ts': "import pc from 'picocolors';\nexport const x = pc;\n",
  'bin/missing.mjs': "import { x } from './absent.mjs';\nconsole.log(x);\n",
  'export/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
  'export/b.ts': "import { a } from './a';\nexport const b = () => a;\n",

  // Allowed: downward imports, activity types in a workflow, the CLI and testbed starting workers.
  'workflows/allowed.ts':
    "import type { ActivityApi } from '../activities/types';\nimport { canonical } from '../domain/url';\nexport type A = ActivityApi;\nexport const x = canonical;\n",
  'activities/allowed.ts':
    "import { db } from '../db/database';\nimport { canonical } from '../domain/url';\nimport { logger } from '../infra/logger';\nexport const x = [db, canonical, logger];\n",
  'cli/allowed.ts':
    "import { startWorkers } from '../workers/run-workers';\nimport { LRUCache } from 'lru-cache';\nexport const x = [startWorkers, LRUCache];\n",
  'testbed/allowed.ts':
    "import { describe } from 'vitest';\nimport { startWorkers } from '../workers/run-workers';\nexport const x = [describe, startWorkers];\n",
};

const EXPECTED = [
  'floor-1-domain: domain/up.ts -> cli/main.ts',
  'floor-2-infra: infra/up.ts -> workers/run-workers.ts',
  'floor-6-api: api/up.ts -> cli/main.ts',
  'floor-1-db: db/up.ts -> infra/logger.ts',
  'floor-4-activities: activities/up.ts -> workflows/messages.ts',
  'workflows-take-activities-as-types: workflows/loads-activities.ts -> activities/index.ts',
  'workflows-deterministic: workflows/io.ts -> infra/logger.ts',
  'pure-code-no-node-builtins: domain/fs.ts -> fs',
  'workflows-npm-sandbox: workflows/pg.ts -> pg',
  'no-test-imports: bench/tests.ts -> test/db/store.test.ts',
  'product-not-on-test-tools: cli/testbed.ts -> testbed/stack.ts',
  'product-no-dev-packages: activities/dev.ts -> vitest',
  'product-declared-packages: activities/undeclared.ts -> picocolors',
  'not-to-unresolvable: bin/missing.mjs -> ./absent.mjs',
  'no-circular: export/a.ts -> export/b.ts',
].sort();

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** An npm path names its package only: node_modules/pg/esm/index.mjs -> pg. */
const packageOf = (to: string) => to.replace(/^node_modules\/((?:@[^/]+\/)?[^/]+)\/.*$/, '$1');

let house: string;

beforeAll(() => {
  house = mkdtempSync(path.join(os.tmpdir(), 'gleaner-layering-'));
  for (const [file, source] of Object.entries(HOUSE)) {
    mkdirSync(path.dirname(path.join(house, file)), { recursive: true });
    writeFileSync(path.join(house, file), source);
  }
  // The real manifest and packages, so npm, dev and undeclared packages are told apart as in the repo.
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(house, 'node_modules'));
  symlinkSync(path.join(ROOT, 'package.json'), path.join(house, 'package.json'));
  symlinkSync(path.join(ROOT, 'tsconfig.json'), path.join(house, 'tsconfig.json'));
});

afterAll(() => {
  if (house) rmSync(house, { recursive: true, force: true });
});

describe('the layering rules', () => {
  it('flag each forbidden import by its rule and let the allowed ones through', async () => {
    const run = await promisify(execFile)(
      process.execPath,
      [DEPCRUISE, '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json', '.'],
      { cwd: house, maxBuffer: 64 * 1024 * 1024 },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      // depcruise exits non-zero when it finds violations: that is the point here.
      if (!error.stdout) throw error;
      return { stdout: error.stdout };
    });
    const result = JSON.parse(run.stdout) as { summary: { violations: Violation[] } };
    const found = result.summary.violations
      .map((v) => `${v.rule.name}: ${v.from} -> ${packageOf(v.to)}`)
      .sort();
    expect(found).toEqual(EXPECTED);
  });
});
