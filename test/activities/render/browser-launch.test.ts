/**
 * How Chromium is started: sandboxed always, through the drop-privileges wrapper when gleaner is
 * root, never with a secret in its environment, and a clear error (no launch) when the sandbox
 * cannot be had. The real launch is proven in test/integration/render-sandbox.test.ts.
 */
import { accessSync, constants } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BrowserUnavailableError,
  browserEnvironment,
  lookupUser,
  planBrowserLaunch,
  RUN_AS_WRAPPER,
} from '../../../activities/render/browser-launch';

const CHROMIUM = '/usr/bin/chromium';

/** A worker's environment as an operator would have it: secrets beside what a browser needs. */
const WORKER_ENV: NodeJS.ProcessEnv = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/root',
  TMPDIR: '/root/tmp',
  LANG: 'en_US.UTF-8',
  LC_ALL: 'en_US.UTF-8',
  TZ: 'Europe/Paris',
  GLEANER_LLM_API_KEY: 'sk-secret',
  GLEANER_API_TOKEN: 'token-secret',
  GLEANER_HOME: '/root/.gleaner',
  DATABASE_URL: 'postgres://u:pw@db/x',
  TEMPORAL_ADDRESS: 'temporal:7233',
  TEMPORAL_TLS_KEY: 'key',
  AWS_SECRET_ACCESS_KEY: 'aws',
  OPENAI_API_KEY: 'sk-openai',
  GITHUB_TOKEN: 'ghp',
  HTTP_PROXY: 'http://user:pw@proxy:3128',
  NODE_OPTIONS: '--require /tmp/x.js',
  LD_PRELOAD: '/tmp/evil.so',
};
const SECRET_NAMES = [
  'GLEANER_LLM_API_KEY',
  'GLEANER_API_TOKEN',
  'GLEANER_HOME',
  'DATABASE_URL',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_TLS_KEY',
  'AWS_SECRET_ACCESS_KEY',
  'OPENAI_API_KEY',
  'GITHUB_TOKEN',
  'HTTP_PROXY',
  'NODE_OPTIONS',
  'LD_PRELOAD',
];

const browserUser = { name: 'gleaner-browser', uid: 999, gid: 995 };

describe('browserEnvironment', () => {
  it('keeps what a browser needs and nothing else', () => {
    const env = browserEnvironment(WORKER_ENV, { sameUser: true });
    expect(env).toEqual({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/root',
      TMPDIR: '/root/tmp',
      LANG: 'en_US.UTF-8',
      LC_ALL: 'en_US.UTF-8',
      TZ: 'Europe/Paris',
    });
  });

  it("gives another user none of gleaner's folders", () => {
    const env = browserEnvironment(WORKER_ENV, { sameUser: false });
    expect(Object.keys(env).sort()).toEqual(['LANG', 'LC_ALL', 'PATH', 'TZ']);
  });

  it('always has a PATH (Debian’s launcher is a shell script)', () => {
    expect(browserEnvironment({}, { sameUser: true })).toEqual({ PATH: '/usr/local/bin:/usr/bin:/bin' });
  });
});

describe('planBrowserLaunch', () => {
  it('as a regular user: Chromium itself, sandbox on, allowlisted environment', () => {
    const plan = planBrowserLaunch({ chromiumPath: CHROMIUM, env: WORKER_ENV, uid: 1000 });
    expect(plan.executablePath).toBe(CHROMIUM);
    expect(plan.chromiumSandbox).toBe(true);
    expect(plan.runAs).toBeUndefined();
    expect(plan.warning).toBeUndefined();
    for (const name of SECRET_NAMES) expect(plan.env, name).not.toHaveProperty(name);
  });

  it('as root: the wrapper that drops to the browser user, sandbox on, no secret and no root folder', () => {
    const plan = planBrowserLaunch({
      chromiumPath: CHROMIUM,
      env: WORKER_ENV,
      uid: 0,
      lookupUser: (name) => (name === 'gleaner-browser' ? browserUser : undefined),
      setprivPath: '/usr/bin/setpriv',
    });
    expect(plan.executablePath).toBe(RUN_AS_WRAPPER);
    expect(plan.chromiumSandbox).toBe(true);
    expect(plan.runAs).toEqual(browserUser);
    expect(plan.env).toMatchObject({
      CHROMIUM_RUN_AS_UID: '999',
      CHROMIUM_RUN_AS_GID: '995',
      CHROMIUM_EXECUTABLE: CHROMIUM,
      CHROMIUM_SETPRIV: '/usr/bin/setpriv',
    });
    for (const name of [...SECRET_NAMES, 'HOME', 'TMPDIR']) expect(plan.env, name).not.toHaveProperty(name);
    // Playwright spawns it directly: it must be executable.
    expect(() => accessSync(RUN_AS_WRAPPER, constants.X_OK)).not.toThrow();
  });

  it('GLEANER_BROWSER_USER names the user to run as', () => {
    const asked: string[] = [];
    planBrowserLaunch({
      chromiumPath: CHROMIUM,
      env: { ...WORKER_ENV, GLEANER_BROWSER_USER: 'render' },
      uid: 0,
      lookupUser: (name) => {
        asked.push(name);
        return { ...browserUser, name };
      },
      setprivPath: '/usr/bin/setpriv',
    });
    expect(asked).toEqual(['render']);
  });

  it('as root without the browser user: a clear error saying how to fix it, no launch', () => {
    const plan = () =>
      planBrowserLaunch({
        chromiumPath: CHROMIUM,
        env: WORKER_ENV,
        uid: 0,
        lookupUser: () => undefined,
        setprivPath: '/usr/bin/setpriv',
      });
    expect(plan).toThrow(BrowserUnavailableError);
    expect(plan).toThrow(/no user gleaner-browser.*scripts\/setup\.sh.*GLEANER_BROWSER_NO_SANDBOX=1/);
  });

  it('as root without setpriv, or with a browser user that is root itself: refused', () => {
    expect(() =>
      planBrowserLaunch({
        chromiumPath: CHROMIUM,
        env: WORKER_ENV,
        uid: 0,
        lookupUser: () => browserUser,
        setprivPath: undefined,
      }),
    ).toThrow(/setpriv/);
    expect(() =>
      planBrowserLaunch({
        chromiumPath: CHROMIUM,
        env: WORKER_ENV,
        uid: 0,
        lookupUser: () => ({ name: 'toor', uid: 0, gid: 0 }),
        setprivPath: '/usr/bin/setpriv',
      }),
    ).toThrow(/must be unprivileged/);
  });

  it('GLEANER_BROWSER_NO_SANDBOX=1 is the explicit way out, with a warning, and still no secret', () => {
    const plan = planBrowserLaunch({
      chromiumPath: CHROMIUM,
      env: { ...WORKER_ENV, GLEANER_BROWSER_NO_SANDBOX: '1' },
      uid: 0,
      lookupUser: () => undefined,
      setprivPath: undefined,
    });
    expect(plan.chromiumSandbox).toBe(false);
    expect(plan.executablePath).toBe(CHROMIUM);
    expect(plan.warning).toMatch(/WITHOUT its sandbox and as root/);
    for (const name of SECRET_NAMES) expect(plan.env, name).not.toHaveProperty(name);
  });

  it('finds users through NSS', () => {
    expect(lookupUser('root')).toEqual({ name: 'root', uid: 0, gid: 0 });
    expect(lookupUser('gleaner-no-such-user')).toBeUndefined();
  });
});
