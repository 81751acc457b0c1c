/**
 * Waiting for the embedded store's holder to let go. PGlite is opened by one process only; a holder
 * with a socket is reached through it, but a reading command (`gleaner search`, `changes`) holds the
 * store for a moment without one, and `gleaner mcp` holds it between an agent's calls. Refusing
 * every other command meanwhile made three `gleaner changes` started together answer once and fail
 * twice, and an agent calling every few seconds kept `gleaner crawl` out for good. So a later
 * process waits: for a reading command to end, and for `gleaner mcp` after asking it to let go
 * (STORE_RELEASE_SIGNAL), until the lock is gone or, for a reader, a holder serves a socket.
 */
import { type LockInfo, readLock, STORE_RELEASE_SIGNAL, StoreLockedError } from '../db/pglite-database';

/** How long a process waits for a holder that yields before it gives up and says who holds the store. */
export const STORE_WAIT_MS = 15_000;
const POLL_MS = 50;

export interface StoreWaitOptions {
  /**
   * A reader: any holder without a socket is waited for (one still opening the store gets its socket
   * in a moment), and one with a socket ends the wait. Otherwise (a crawl, which attaches only to
   * `gleaner dev`) only a holder that yields is waited for.
   */
  orSocket?: boolean;
  /** @default STORE_WAIT_MS */
  timeoutMs?: number;
}

/**
 * Waits while the lock's holder keeps the store from this process (see `orSocket`), asking one that
 * yields on request to let go. Returns the holder at the end: undefined when the store is free, else
 * one with a socket (`orSocket`), one that does not yield, or the one still holding at the timeout.
 */
export async function awaitStoreHolder(
  lockFile: string,
  holder: LockInfo | undefined,
  options: StoreWaitOptions = {},
): Promise<LockInfo | undefined> {
  const deadline = Date.now() + (options.timeoutMs ?? STORE_WAIT_MS);
  const asked = new Set<number>();
  const blocks = (info: LockInfo) => (options.orSocket ? !info.databaseUrl : info.yields !== undefined);
  let current = holder;
  while (current && blocks(current)) {
    if (current.yields === 'on-request' && !asked.has(current.pid)) {
      asked.add(current.pid);
      try {
        process.kill(current.pid, STORE_RELEASE_SIGNAL);
      } catch {
        // Gone meanwhile: the next read of the lock says so.
      }
    }
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    current = readLock(lockFile);
  }
  return current;
}

/**
 * Opens the store with `open` once no holder keeps it from this process (awaitStoreHolder), or returns
 * the holder that does. Commands started together all find the store free the moment its holder lets
 * go, and all but one then lose the race for the lock: each loser waits for the winner in turn instead
 * of failing with StoreLockedError (three `gleaner search` started while `gleaner mcp` held the store
 * answered once and failed twice).
 */
export async function openWhenFree<T>(
  lockFile: string,
  open: () => Promise<T>,
  options: StoreWaitOptions = {},
): Promise<{ store: T } | { holder: LockInfo }> {
  const deadline = Date.now() + (options.timeoutMs ?? STORE_WAIT_MS);
  for (;;) {
    const timeoutMs = Math.max(0, deadline - Date.now());
    const holder = await awaitStoreHolder(lockFile, readLock(lockFile), { ...options, timeoutMs });
    if (holder) return { holder };
    try {
      return { store: await open() };
    } catch (error) {
      if (!(error instanceof StoreLockedError) || Date.now() >= deadline) throw error;
    }
  }
}
