/**
 * PGlite's WebAssembly and file bundle prepared ahead of `PGlite.create` (db/pglite-artifacts.ts):
 * the module compiles once per process, the bundle is the whole pglite.data, and a store opened with
 * them answers queries, and again after it was closed.
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { preparePgliteArtifacts } from '../../db/pglite-artifacts';
import { PgliteDatabase } from '../../db/pglite-database';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('PGlite artifacts prepared ahead', () => {
  it('compiles the module once and reads the whole bundle', async () => {
    const first = await preparePgliteArtifacts();
    const second = await preparePgliteArtifacts();
    expect(first).toBeDefined();
    expect(second?.pgliteWasmModule).toBe(first?.pgliteWasmModule);
    expect(WebAssembly.Module.exports(first?.pgliteWasmModule as WebAssembly.Module).length).toBeGreaterThan(
      100,
    );
    const dist = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    const expected = readFileSync(path.join(dist, 'pglite.data'));
    const fsBundle = first?.fsBundle as Blob;
    const bundle = new Uint8Array(await fsBundle.arrayBuffer());
    expect(bundle.byteLength).toBe(expected.byteLength);
    expect(Buffer.compare(Buffer.from(bundle), expected)).toBe(0);
  });

  it('opens a store that answers queries, twice in one process', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gleaner-pglite-artifacts-'));
    dirs.push(dir);
    for (let i = 0; i < 2; i++) {
      const db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
      try {
        await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
        const { rows } = await db.query<{ v: string }>("SELECT '[1,2,3]'::vector(3)::text AS v");
        expect(rows[0]?.v).toBe('[1,2,3]');
      } finally {
        await db.close();
      }
    }
  }, 120_000);
});
