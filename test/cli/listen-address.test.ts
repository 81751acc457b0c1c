/**
 * Where the API is told to listen is the caller's to get right, and a wrong one is a usage error
 * (exit 2, one line). A port no socket can have is refused before anything starts: `gleaner api
 * --port 99999` started the embedded Temporal, the store and every worker, then failed in `listen`
 * with "unexpected error" and exit 1; so did an address that is not this machine's.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGleaner } from '../../testbed/gleaner-process';

let home: string;

beforeAll(() => {
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-port-option-'));
});

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('a port beyond 65535', () => {
  for (const args of [
    ['api', '--port', '99999'],
    ['dev', '--api-port', '65536'],
  ]) {
    it(`gleaner ${args.join(' ')}: one usage line, exit 2, nothing started`, async () => {
      const run = await runGleaner(args, { GLEANER_HOME: home, GLEANER_LOG_LEVEL: undefined });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`${args[1]} must be at most 65535, got ${args[2]}`);
      expect(run.stderr).not.toMatch(/unexpected error|^\s+at /m);
      // No store, no Temporal state: the command stopped at its flags.
      expect(readdirSync(home).filter((name) => name !== 'logs' && name !== 'started')).toEqual([]);
    });
  }
});

describe('a listen address that is not this machine', () => {
  it('gleaner api --host 192.0.2.1 (TEST-NET, never local): one usage line, exit 2', async () => {
    // A home of its own: this command does start the stack before it listens.
    const own = path.join(home, 'started');
    const run = await runGleaner(['api', '--host', '192.0.2.1', '--port', '0'], {
      GLEANER_HOME: own,
      GLEANER_LOG_LEVEL: undefined,
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('cannot listen on 192.0.2.1: not an address of this machine');
    expect(run.stderr).not.toMatch(/unexpected error|^\s+at /m);
  }, 120_000);
});
