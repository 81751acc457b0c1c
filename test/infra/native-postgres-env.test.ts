/**
 * The throwaway Postgres that tests and benchmarks start gets an allowlisted environment: a secret
 * in gleaner's environment never reaches the server process (read from its /proc environ).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';

const SECRETS = { GLEANER_LLM_API_KEY: 'sk-canary-pg-71c2', GLEANER_API_TOKEN: 'tok-canary-pg-71c2' };
let postgres: NativePostgres | undefined;
const saved = Object.fromEntries(Object.keys(SECRETS).map((name) => [name, process.env[name]]));

afterAll(async () => {
  await postgres?.stop();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('native Postgres', () => {
  it('starts with none of gleaner’s secrets in its environment', async () => {
    Object.assign(process.env, SECRETS);
    postgres = await startNativePostgres();
    const pid = Number(readFileSync(join(postgres.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(pid).toBeGreaterThan(0);
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
    expect(environ).toContain('PATH=');
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(environ).not.toContain(name);
      expect(environ).not.toContain(value);
    }
  });
});
