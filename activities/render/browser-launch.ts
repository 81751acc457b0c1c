/**
 * How Chromium is started with least privilege. A rendered page is code written by a stranger, so:
 * - Chromium's sandbox stays on (renderers in their own user and PID namespaces under seccomp-bpf).
 *   Chromium refuses its sandbox to root, so when gleaner runs as root the browser is started as an
 *   unprivileged user (`gleaner-browser`, created by scripts/setup.sh) through a tiny wrapper,
 *   chromium-as-user.sh, that drops to it with setpriv and then execs Chromium in place: the pid,
 *   the process group (what the pool kills) and Playwright's pipe to the browser stay the same.
 * - The browser's environment is an allowlist: none of gleaner's secrets (API keys, DATABASE_URL,
 *   tokens) reach the browser or the renderers it forks.
 * Where the sandbox cannot be had (root without that user or setpriv), rendering stops with a
 * message saying how to fix it; GLEANER_BROWSER_NO_SANDBOX=1 is the explicit, logged way out.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { allowlistedEnv } from '../../infra/child-env';

/** No browser to render with: a setup problem no retry fixes. */
export class BrowserUnavailableError extends Error {
  override readonly name = 'BrowserUnavailableError';
}

/** The unprivileged user the browser runs as when gleaner runs as root. */
export const DEFAULT_BROWSER_USER = 'gleaner-browser';
/** Set to 1 to render without Chromium's sandbox (logged as a warning on every launch plan). */
export const NO_SANDBOX_ENV = 'GLEANER_BROWSER_NO_SANDBOX';
/** Names the user to run the browser as instead of `gleaner-browser`. */
export const BROWSER_USER_ENV = 'GLEANER_BROWSER_USER';

/** The wrapper that drops to the browser user; it reads its three settings from these variables. */
export const RUN_AS_WRAPPER = fileURLToPath(new URL('./chromium-as-user.sh', import.meta.url));
const WRAPPER_ENV = {
  uid: 'CHROMIUM_RUN_AS_UID',
  gid: 'CHROMIUM_RUN_AS_GID',
  executable: 'CHROMIUM_EXECUTABLE',
  setpriv: 'CHROMIUM_SETPRIV',
} as const;

/**
 * Variables the browser may inherit. Everything else (GLEANER_*, DATABASE_URL, TEMPORAL_*, tokens,
 * keys, proxies…) is left behind. HOME, XDG_* and TMPDIR are passed only when the browser runs as
 * gleaner's own user; as another user it gets a home of its own (its profile folder). Either way the
 * pool then points TMPDIR at a temp folder of the browser's own (browser-pool.ts).
 */
const PASSED_NAMES = ['PATH', 'LANG', 'LANGUAGE', 'TZ', 'FONTCONFIG_FILE', 'FONTCONFIG_PATH', 'LC_*'];
const SAME_USER_NAMES = ['HOME', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'TMPDIR'];

export interface BrowserUser {
  name: string;
  uid: number;
  gid: number;
}

export interface BrowserLaunchPlan {
  /** What Playwright spawns: Chromium itself, or the wrapper that drops to `runAs` first. */
  executablePath: string;
  /** Playwright adds --no-sandbox unless this is true. */
  chromiumSandbox: boolean;
  env: Record<string, string>;
  /** The user Chromium runs as when it is not gleaner's own. */
  runAs?: BrowserUser;
  /** Set when the sandbox is off: to be logged loudly. */
  warning?: string;
}

export interface PlanOptions {
  chromiumPath: string;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** @default process.getuid() */
  uid?: number;
  /** @default getent passwd */
  lookupUser?: (name: string) => BrowserUser | undefined;
  /** @default setpriv found on PATH or in /usr/bin, /bin */
  setprivPath?: string | undefined;
}

/** Decides how to start Chromium; throws `BrowserUnavailableError` when it cannot be started sandboxed. */
export function planBrowserLaunch(options: PlanOptions): BrowserLaunchPlan {
  const env = options.env ?? process.env;
  const uid = options.uid ?? process.getuid?.() ?? -1;
  if (env[NO_SANDBOX_ENV] === '1') {
    return {
      executablePath: options.chromiumPath,
      chromiumSandbox: false,
      env: browserEnvironment(env, { sameUser: true }),
      warning:
        `${NO_SANDBOX_ENV}=1: Chromium runs WITHOUT its sandbox${uid === 0 ? ' and as root' : ''}; ` +
        'a page that exploits a renderer bug owns this process and everything it can reach. ' +
        (uid === 0 ? 'Run scripts/setup.sh as root to create the gleaner-browser user instead.' : ''),
    };
  }
  if (uid !== 0) {
    return {
      executablePath: options.chromiumPath,
      chromiumSandbox: true,
      env: browserEnvironment(env, { sameUser: true }),
    };
  }
  const userName = env[BROWSER_USER_ENV] || DEFAULT_BROWSER_USER;
  const user = (options.lookupUser ?? lookupUser)(userName);
  const setpriv = 'setprivPath' in options ? options.setprivPath : findSetpriv(env.PATH);
  const fix =
    'run `bash scripts/setup.sh` as root (it creates that user), run gleaner as a regular user, ' +
    `or set ${NO_SANDBOX_ENV}=1 to render without the sandbox (not recommended)`;
  if (!user)
    throw new BrowserUnavailableError(
      `gleaner runs as root and Chromium's sandbox refuses root, but there is no user ${userName} to run the browser as: ${fix}`,
    );
  if (user.uid === 0)
    throw new BrowserUnavailableError(
      `the browser user ${userName} is root (uid 0): it must be unprivileged; ${fix}`,
    );
  if (!setpriv)
    throw new BrowserUnavailableError(
      `gleaner runs as root and needs setpriv (util-linux) to start Chromium as ${userName}, and there is none: ` +
        `install util-linux; or ${fix}`,
    );
  assertExecutable(RUN_AS_WRAPPER);
  return {
    executablePath: RUN_AS_WRAPPER,
    chromiumSandbox: true,
    env: {
      ...browserEnvironment(env, { sameUser: false }),
      [WRAPPER_ENV.uid]: String(user.uid),
      [WRAPPER_ENV.gid]: String(user.gid),
      [WRAPPER_ENV.executable]: options.chromiumPath,
      [WRAPPER_ENV.setpriv]: setpriv,
    },
    runAs: user,
  };
}

/** The allowlisted part of `env`. */
export function browserEnvironment(
  env: NodeJS.ProcessEnv,
  options: { sameUser: boolean },
): Record<string, string> {
  const kept = allowlistedEnv(env, options.sameUser ? [...PASSED_NAMES, ...SAME_USER_NAMES] : PASSED_NAMES, {
    withBase: false,
  });
  kept.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return kept;
}

/** Looks a user up through NSS (getent), so users from any passwd source count. */
export function lookupUser(name: string): BrowserUser | undefined {
  let line: string;
  try {
    line = execFileSync('getent', ['passwd', name], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return undefined;
  }
  const [, , uid, gid] = line.trim().split(':');
  if (uid === undefined || gid === undefined || !/^\d+$/.test(uid) || !/^\d+$/.test(gid)) return undefined;
  return { name, uid: Number(uid), gid: Number(gid) };
}

function findSetpriv(searchPath: string | undefined): string | undefined {
  const dirs = [...(searchPath ?? '').split(':').filter(Boolean), '/usr/bin', '/bin'];
  for (const dir of dirs) {
    const candidate = path.join(dir, 'setpriv');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

function assertExecutable(file: string): void {
  try {
    accessSync(file, constants.X_OK);
  } catch {
    throw new BrowserUnavailableError(`${file} is missing or not executable (chmod +x it)`);
  }
}
