/**
 * What an activity test runs against without Temporal: a real PGlite store, migrated, in a folder of
 * its own under the system's temporary folder, and a loopback site (`site-server.ts`) to fetch from;
 * plus the fetch spec such a test hands its activities. Whoever opens the store closes it: `close()`
 * also stops the page-analysis threads the activities started (fetch, render and page batches all
 * read HTML in them), so no thread outlives the test file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closePageAnalysisPool } from '../activities/page-analysis-pool';
import type { FetchSpec } from '../activities/types';
import { migrate } from '../db/migrate';
import { PgliteDatabase } from '../db/pglite-database';
import { type SiteServer, serveSite } from './site-server';

export interface LoopbackStore {
  readonly db: PgliteDatabase;
  /** A site with no files: tests add the routes they need. */
  readonly site: SiteServer;
  /** Stops the page-analysis threads, closes the site and the store, and removes the store's folder. */
  close(): Promise<void>;
}

/** Opens a store in a new folder named from `tmpPrefix` (e.g. `gleaner-deadline-`) and starts a site. */
export async function openLoopbackStore(tmpPrefix: string): Promise<LoopbackStore> {
  const dir = mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
  let db: PgliteDatabase | undefined;
  let site: SiteServer | undefined;
  const close = async () => {
    await closePageAnalysisPool();
    await site?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
    await migrate(db);
    site = await serveSite(undefined);
    return { db, site, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * A same-origin fetch spec for a loopback site: depth 5, five redirects, a 10 MiB body cap, user agent
 * `gleaner-test`, and 127.0.0.1 let through the SSRF guard. No `delayMs`, `bodyTimeoutMs`,
 * `contentTypes` or `lang` unless `overrides` names them (as inputs scheduled before those existed).
 */
export function loopbackFetchSpec(seed: string, overrides: Partial<FetchSpec> = {}): FetchSpec {
  return {
    scope: 'same-origin',
    seeds: [seed],
    domains: [],
    includePrefixes: [],
    exclude: [],
    maxDepth: 5,
    userAgent: 'gleaner-test',
    allowHosts: ['127.0.0.1'],
    maxBodyBytes: 10 * 1024 * 1024,
    maxRedirects: 5,
    ...overrides,
  };
}
