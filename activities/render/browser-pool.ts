/**
 * A bounded pool of headless Chromium pages that cannot leak: at most `maxPages` pages at once
 * (each in its own fresh context, closed in a `finally`), a hard deadline on every browser call
 * (a call that overruns kills the browser, which fails every call pending on it), the browser
 * recycled after `pagesPerBrowser` pages, and a watchdog per browser process group that kills it
 * if this process dies first. Playwright launches Chromium as the leader of its own process group;
 * the group id is what gets killed, so renderers and zygotes go with it. Chromium runs sandboxed,
 * as an unprivileged user when this process is root, with an allowlisted environment
 * (browser-launch.ts).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, BrowserServer, Page } from 'playwright-core';
import { logger } from '../../infra/logger';
import {
  type BrowserLaunchPlan,
  BrowserUnavailableError,
  NO_SANDBOX_ENV,
  planBrowserLaunch,
} from './browser-launch';
import { killProcessGroup, watchProcessGroup } from './process-watchdog';

export { BrowserUnavailableError } from './browser-launch';

/** Flags known to work on these machines (closed network); Playwright adds --headless. */
export const CHROMIUM_FLAGS = [
  // Every request is answered by interception (browser-network.ts); Chromium itself resolves no
  // host (IP literals included), so anything that ever slipped past interception fails here.
  '--host-resolver-rules=MAP * ~NOTFOUND',
  // WebRTC opens UDP sockets outside the HTTP stack and its interception: none without a proxy.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/** A browser call overran its deadline; the browser was killed. */
export class BrowserDeadlineError extends Error {
  override readonly name = 'BrowserDeadlineError';
}

export interface BrowserPoolOptions {
  /** @default GLEANER_CHROMIUM or /usr/bin/chromium */
  executablePath?: string;
  /** Pages rendering at once in this process. @default 2 */
  maxPages?: number;
  /** A browser is closed and a fresh one launched after this many pages. @default 100 */
  pagesPerBrowser?: number;
  /** Deadline for any single browser call other than navigation and settling. @default 15000 */
  callTimeoutMs?: number;
  /** Deadline for launching Chromium. @default 30000 */
  launchTimeoutMs?: number;
}

interface BrowserHandle {
  server: BrowserServer;
  browser: Browser;
  groupId: number;
  /** Folders of this browser alone, removed once it is gone. */
  folders: BrowserFolders;
  pages: number;
  active: number;
  retired: boolean;
  closing?: Promise<void>;
}

export class BrowserPool {
  readonly executablePath: string;
  private readonly maxPages: number;
  private readonly pagesPerBrowser: number;
  readonly callTimeoutMs: number;
  private readonly launchTimeoutMs: number;
  private current: BrowserHandle | undefined;
  private launching: Promise<BrowserHandle> | undefined;
  private readonly handles = new Set<BrowserHandle>();
  private readonly waiters: Array<() => void> = [];
  private busy = 0;
  private closed = false;
  private plan: BrowserLaunchPlan | undefined;
  /** Every process group this pool launched, for leak checks. */
  readonly launchedGroups: number[] = [];
  /** The folders of every browser this pool launched (temp, artifacts, profile), for leak checks. */
  readonly launchedFolders: string[][] = [];

  constructor(options: BrowserPoolOptions = {}) {
    this.executablePath = options.executablePath ?? process.env.GLEANER_CHROMIUM ?? DEFAULT_CHROMIUM_PATH;
    this.maxPages = options.maxPages ?? 2;
    this.pagesPerBrowser = options.pagesPerBrowser ?? 100;
    this.callTimeoutMs = options.callTimeoutMs ?? 15_000;
    this.launchTimeoutMs = options.launchTimeoutMs ?? 30_000;
  }

  /** Runs `use` on a fresh page in a fresh context; the context is closed whatever happens. */
  async withPage<T>(
    contextOptions: { userAgent: string },
    use: (page: Page, deadline: <R>(call: Promise<R>, what: string, ms?: number) => Promise<R>) => Promise<T>,
  ): Promise<T> {
    if (this.closed) throw new Error('the browser pool is closed');
    await this.acquireSlot();
    let handle: BrowserHandle | undefined;
    let context: BrowserContext | undefined;
    try {
      handle = await this.browserForPage();
      handle.pages++;
      handle.active++;
      const owner = handle;
      const deadline = <R>(call: Promise<R>, what: string, ms = this.callTimeoutMs) =>
        this.within(owner, call, what, ms);
      context = await deadline(
        owner.browser.newContext({
          userAgent: contextOptions.userAgent,
          serviceWorkers: 'block',
          acceptDownloads: false,
        }),
        'newContext',
      );
      const page = await deadline(context.newPage(), 'newPage');
      return await use(page, deadline);
    } finally {
      if (context && handle) {
        const owner = handle;
        await this.within(owner, context.close(), 'context.close', this.callTimeoutMs).catch(() => undefined);
      }
      if (handle) {
        handle.active--;
        if (handle.pages >= this.pagesPerBrowser) handle.retired = true;
        if (handle.retired && handle.active === 0) await this.closeBrowser(handle);
      }
      this.releaseSlot();
    }
  }

  /** Closes every browser and kills their process groups; pending renders fail. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.handles].map((handle) => this.closeBrowser(handle)));
  }

  private async within<R>(handle: BrowserHandle, call: Promise<R>, what: string, ms: number): Promise<R> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // A call that hangs means a wedged browser: kill it so nothing waits on it forever.
        handle.retired = true;
        killProcessGroup(handle.groupId);
        reject(new BrowserDeadlineError(`browser call ${what} took longer than ${ms} ms; browser killed`));
      }, ms);
    });
    try {
      return await Promise.race([call, expired]);
    } finally {
      clearTimeout(timer);
      call.catch(() => undefined);
    }
  }

  private async browserForPage(): Promise<BrowserHandle> {
    const current = this.current;
    if (current && !current.retired && current.pages < this.pagesPerBrowser) return current;
    if (current) {
      current.retired = true;
      if (current.active === 0) void this.closeBrowser(current);
    }
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined;
    });
    const handle = await this.launching;
    this.current = handle;
    return handle;
  }

  /**
   * Throws `BrowserUnavailableError` when there is no browser to launch, or no way to launch it
   * sandboxed (checked before any request is sent).
   */
  assertAvailable(): void {
    this.launchPlan();
  }

  /** How Chromium is started (sandbox, user, environment); decided once per pool. */
  launchPlan(): BrowserLaunchPlan {
    if (this.plan) return this.plan;
    if (!existsSync(this.executablePath)) {
      throw new BrowserUnavailableError(
        `this page needs a browser to render, but ${this.executablePath} does not exist: run scripts/setup.sh as root ` +
          "(it installs Debian's chromium), set GLEANER_CHROMIUM, or crawl with --render never",
      );
    }
    const plan = planBrowserLaunch({ chromiumPath: this.executablePath });
    if (plan.warning) logger.warn({ component: 'browser', sandbox: false }, plan.warning);
    this.plan = plan;
    return plan;
  }

  private async launch(): Promise<BrowserHandle> {
    const plan = this.launchPlan();
    // Imported here, on the first render: loading playwright cost every worker process ~0.15-0.3 s of
    // CPU at start-up, and most crawls never start a browser.
    const { chromium } = await import('playwright-core');
    const folders = browserFolders();
    let server: BrowserServer;
    try {
      server = await chromium.launchServer({
        executablePath: plan.executablePath,
        chromiumSandbox: plan.chromiumSandbox,
        env: { ...plan.env, TMPDIR: folders.temp },
        artifactsDir: folders.artifacts,
        headless: true,
        args: CHROMIUM_FLAGS,
        timeout: this.launchTimeoutMs,
        // Playwright's own handlers exit the process (130 on Ctrl-C) before gleaner's shutdown runs:
        // no "interrupted, resume with …" line and the store's lock left behind. The pool closes its
        // browsers on shutdown, and the watchdog kills them if this process dies first.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (error) {
      removeFolders(folders);
      const message = (error as Error).message;
      // No retry fixes a machine where the sandbox cannot start (no user namespaces, no setuid helper).
      if (plan.chromiumSandbox && /No usable sandbox|sandboxing failed|crbug\.com\/638180/i.test(message))
        throw new BrowserUnavailableError(
          `Chromium could not start its sandbox${plan.runAs ? ` as user ${plan.runAs.name}` : ''}: ` +
            `enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or set ` +
            `${NO_SANDBOX_ENV}=1 to render without it (not recommended). ${message}`,
        );
      // The wrapper's own refusals (chromium-as-user.sh) are setup problems too.
      const refusal = /chromium-as-user: [^\n]*/.exec(message)?.[0];
      if (refusal) throw new BrowserUnavailableError(refusal);
      throw error;
    }
    const groupId = server.process().pid;
    if (groupId === undefined) {
      await server.kill();
      removeFolders(folders);
      throw new Error('Chromium started without a process id');
    }
    folders.profile = profileFolder(server.process().spawnargs);
    this.launchedGroups.push(groupId);
    this.launchedFolders.push(folderList(folders));
    watchProcessGroup(groupId, process.pid, folderList(folders));
    let browser: Browser;
    try {
      browser = await chromium.connect(server.wsEndpoint(), { timeout: this.launchTimeoutMs });
    } catch (error) {
      killProcessGroup(groupId);
      throw error;
    }
    const handle: BrowserHandle = { server, browser, groupId, folders, pages: 0, active: 0, retired: false };
    this.handles.add(handle);
    browser.on('disconnected', () => {
      handle.retired = true;
      killProcessGroup(groupId);
    });
    return handle;
  }

  private closeBrowser(handle: BrowserHandle): Promise<void> {
    handle.retired = true;
    if (this.current === handle) this.current = undefined;
    handle.closing ??= (async () => {
      await this.within(handle, handle.browser.close(), 'browser.close', this.callTimeoutMs).catch(
        () => undefined,
      );
      await this.within(handle, handle.server.close(), 'server.close', this.callTimeoutMs).catch(
        () => undefined,
      );
      // Stragglers (a renderer still exiting) go with the group.
      killProcessGroup(handle.groupId);
      // The watchdog removes them too once the group is gone; here they go at once.
      removeFolders(handle.folders);
      this.handles.delete(handle);
    })();
    return handle.closing;
  }

  private acquireSlot(): Promise<void> {
    if (this.busy < this.maxPages) {
      this.busy++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private releaseSlot(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.busy--;
  }
}

/**
 * Where one browser may write outside its profile. Chromium puts its singleton socket folder
 * (`org.chromium.Chromium.*`) in TMPDIR and leaves it there on exit, and Playwright's artifacts
 * folder stays behind when the worker dies: in the system's /tmp, one of each per launch added up
 * (333 in a day of test runs). In folders of the browser's own, they go with it.
 */
interface BrowserFolders {
  temp: string;
  artifacts: string;
  /** Playwright's temporary profile (`--user-data-dir`); removed by Playwright on a clean close. */
  profile?: string;
}

function browserFolders(): BrowserFolders {
  const temp = mkdtempSync(path.join(os.tmpdir(), 'gleaner-browser-tmp-'));
  try {
    return { temp, artifacts: mkdtempSync(path.join(os.tmpdir(), 'gleaner-browser-artifacts-')) };
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
}

function folderList(folders: BrowserFolders): string[] {
  return [folders.temp, folders.artifacts, ...(folders.profile ? [folders.profile] : [])];
}

function removeFolders(folders: BrowserFolders): void {
  for (const folder of folderList(folders)) {
    try {
      rmSync(folder, { recursive: true, force: true });
    } catch (error) {
      logger.warn({ component: 'browser', folder, err: error }, 'could not remove a browser folder');
    }
  }
}

/** The profile Playwright made for this launch; only a folder of that name is ever removed. */
export function profileFolder(spawnArgs: readonly string[]): string | undefined {
  const arg = spawnArgs.find((a) => a.startsWith('--user-data-dir='));
  const folder = arg?.slice('--user-data-dir='.length);
  return folder && path.isAbsolute(folder) && /^playwright_chromium\w*_profile-/.test(path.basename(folder))
    ? folder
    : undefined;
}
