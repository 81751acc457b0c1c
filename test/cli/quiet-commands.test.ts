/**
 * The commands a person runs in a terminal keep their JSON logs out of it (bin/gleaner.js sends
 * them to $GLEANER_HOME/logs/gleaner.log): `context`, `changes`, `export` and `report` were left
 * out, so a model that could not load put a JSON log line with its stack on `context`'s stderr.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { runGleaner } from '../../testbed/gleaner-process';

let home: string;

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-quiet-'));
  const db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
}, 120_000);

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('interactive commands log to the log file, not the terminal', () => {
  it('gleaner context with a model that cannot load: plain notes on stderr, the warning in the log file', async () => {
    const missing = path.join(home, 'no-model');
    // GLEANER_LOG_LEVEL unset, as in a user's shell (the test helper sets it to keep logs on stderr).
    const run = await runGleaner(['context', 'how do I install it'], {
      GLEANER_HOME: home,
      GLEANER_MODEL_DIR: missing,
      GLEANER_LOG_LEVEL: undefined,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('note: searched by words only');
    expect(run.stderr).not.toMatch(/^\{/m);
    const logFile = path.join(home, 'logs', 'gleaner.log');
    expect(existsSync(logFile)).toBe(true);
    expect(readFileSync(logFile, 'utf8')).toContain('could not load the embedding model');
  });
});
