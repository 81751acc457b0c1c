/**
 * What `gleaner dev` prints about the database (issue 28): an operator's DATABASE_URL without its
 * password, and on the embedded default a psql URL that carries the socket's password, works in
 * psql, and is refused without it; the reading commands attach with the password file.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';
import { runGleaner, spawnGleaner, waitFor } from '../../testbed/gleaner-process';

const run = promisify(execFile);
const CANARY = 'canary-s3cret-9f2d';

let home: string;
let postgres: NativePostgres;

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-dev-secrets-'));
  postgres = await startNativePostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
  rmSync(home, { recursive: true, force: true });
});

/** Starts `gleaner dev`, returns its banner once printed, and stops it. */
async function devBanner(env: Record<string, string>, whileRunning?: (banner: string) => Promise<void>) {
  const dev = spawnGleaner(['dev', '--api-port', '0'], env);
  let stderr = '';
  dev.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  try {
    await waitFor(() => stderr.includes('other gleaner commands'), 240_000, 'gleaner dev to start').catch(
      (error: Error) => {
        throw new Error(`${error.message}; stderr:\n${stderr}`);
      },
    );
    await whileRunning?.(stderr);
  } finally {
    const exited = new Promise((resolve) => dev.once('exit', resolve));
    dev.kill('SIGTERM');
    await exited;
  }
  return stderr;
}

describe('gleaner dev and secrets', () => {
  it("prints an operator's DATABASE_URL with its password hidden", async () => {
    // The test server trusts loopback, so any password gets in: the canary need only not be shown.
    const url = new URL(postgres.url);
    url.password = CANARY;
    const stderr = await devBanner({
      GLEANER_HOME: path.join(home, 'native'),
      DATABASE_URL: url.toString(),
      GLEANER_LOG_LEVEL: 'info',
    });
    expect(stderr).toMatch(/psql\s+psql "postgres:\/\/postgres:\*\*\*@127\.0\.0\.1/);
    expect(stderr).not.toContain(CANARY);
  }, 300_000);

  it('prints an embedded psql URL that carries the password, and readers attach with the password file', async () => {
    const env = { GLEANER_HOME: path.join(home, 'embedded') };
    await devBanner(env, async (banner) => {
      const psqlUrl = /psql "([^"]+)"/.exec(banner)?.[1] ?? '';
      expect(new URL(psqlUrl).password.length).toBeGreaterThanOrEqual(24);
      expect(banner).toMatch(/keep it to yourself/);
      const ok = await run('psql', ['-w', '-Atc', 'SELECT count(*) FROM pages', psqlUrl]);
      expect(ok.stdout.trim()).toBe('0');
      const bare = new URL(psqlUrl);
      bare.password = '';
      const refused = await run('psql', ['-w', '-Atc', 'SELECT 1', bare.toString()]).catch(
        (error: { code: number; stderr: string }) => error,
      );
      expect(refused).toMatchObject({ code: 2 });
      // `gleaner search` reads through the socket of the process holding the store.
      const search = await runGleaner(['search', 'anything', '--json'], env);
      expect(search.code, search.stderr).toBe(0);
    });
  }, 300_000);
});
