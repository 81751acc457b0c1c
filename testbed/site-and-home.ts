/**
 * The fixture of the command-line tests on the embedded default: a loopback site of generated pages
 * and a fresh GLEANER_HOME, made before the file's tests and removed after them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { addGeneratedPages } from './generated-site';
import { type SiteServer, serveSite } from './site-server';

export interface SiteAndHome {
  site: SiteServer;
  home: string;
}

/** Registers the file's beforeAll/afterAll; the fields are set once beforeAll has run. */
export function siteAndHomeForFile(pages: number, homePrefix = 'gleaner-home-'): SiteAndHome {
  const fixture = {} as SiteAndHome;
  beforeAll(async () => {
    fixture.site = await serveSite(undefined);
    addGeneratedPages(fixture.site, pages);
    fixture.home = mkdtempSync(path.join(os.tmpdir(), homePrefix));
  });
  afterAll(async () => {
    await fixture.site?.close();
    if (fixture.home) rmSync(fixture.home, { recursive: true, force: true });
  });
  return fixture;
}
