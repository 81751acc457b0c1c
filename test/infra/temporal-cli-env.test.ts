/**
 * Secrets stay out of the Temporal dev server (issue 28): gleaner's parent process holds the LLM
 * key, the database URL with its password and the API token; the server it spawns, and the
 * watchdog shell beside it, get an allowlisted environment. Read from /proc/<pid>/environ of the
 * real processes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTemporalDevServer, type TemporalDevServer } from '../../infra/temporal-cli';

const SECRETS = {
  GLEANER_LLM_API_KEY: 'sk-llm-secret-3c9f',
  GLEANER_WEBHOOK_SECRET: 'whsec-7e21',
  DATABASE_URL: 'postgres://gleaner:db-secret-77a1@127.0.0.1:5432/gleaner',
  GLEANER_API_TOKEN: 'api-secret-b21e',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-0d4c',
};
const saved: Record<string, string | undefined> = {};
let server: TemporalDevServer;

function environOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(
    entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
}

/** The watchdog shell started beside the server: `/bin/sh -c … gleaner-watchdog <our pid> <server pid>`. */
function watchdogPid(serverPid: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.includes('gleaner-watchdog') && argv.includes(String(serverPid))) return Number(entry);
    } catch {}
  }
  return undefined;
}

beforeAll(async () => {
  for (const [name, value] of Object.entries(SECRETS)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  server = await startTemporalDevServer({ uiPort: false });
}, 90_000);

afterAll(async () => {
  await server?.stop();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('the Temporal dev server child process', () => {
  it('inherits none of the parent’s secrets, only what it needs', () => {
    const environ = environOf(server.pid);
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(environ.has(name), `${name} reached the Temporal dev server`).toBe(false);
      expect(
        [...environ.values()].some((v) => v.includes(value)),
        `${name}'s value reached it`,
      ).toBe(false);
    }
    expect(environ.get('PATH')).toBe(process.env.PATH);
  });

  it('nor does its watchdog shell', () => {
    const pid = watchdogPid(server.pid);
    expect(pid, 'watchdog process not found').toBeDefined();
    const environ = environOf(pid as number);
    for (const name of Object.keys(SECRETS)) expect(environ.has(name), name).toBe(false);
  });
});
