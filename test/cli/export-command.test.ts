/** `gleaner export` and `gleaner report` refuse bad flags with one line and exit 2, touching no store. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lastLine, runGleaner } from '../helpers/gleaner-process';

const home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-export-cli-'));
const env = { GLEANER_HOME: home };

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('gleaner export: bad input', () => {
  it('needs --out', async () => {
    const result = await runGleaner(['export'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--out <dir>/);
  });

  it('takes --crawl or --origin, not both, and an origin must be a URL', async () => {
    const both = await runGleaner(
      ['export', '--out', home, '--crawl', 'a', '--origin', 'https://x.org'],
      env,
    );
    expect(both.code).toBe(2);
    expect(lastLine(both.stderr)).toBe('gleaner: give --crawl or --origin, not both');
    const bad = await runGleaner(['export', '--out', home, '--origin', 'not a url'], env);
    expect(bad.code).toBe(2);
    expect(lastLine(bad.stderr)).toMatch(/--origin must be a URL/);
    const delay = await runGleaner(['export', '--out', home, '--asset-delay-ms', '-1'], env);
    expect(delay.code).toBe(2);
  });

  it('says plainly when there is no corpus yet', async () => {
    const result = await runGleaner(['export', '--out', path.join(home, 'out')], env);
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toMatch(/no corpus in .* yet/);
    const report = await runGleaner(['report'], env);
    expect(report.code).toBe(2);
    expect(lastLine(report.stderr)).toMatch(/no corpus in .* yet/);
  });
});
