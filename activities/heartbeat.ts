import { Context } from '@temporalio/activity';

/** How a long step beats; every field is optional. */
export interface HeartbeatOptions {
  /** Time between two beats; the first comes one interval after the start. @default 5000 */
  intervalMs?: number;
  /** Details sent with each beat (e.g. progress a retry can read). @default none */
  details?: () => unknown;
  /**
   * Where beats go. @default the current activity's heartbeat; nothing when the code is called
   * directly (benches, tests)
   */
  heartbeat?: (details?: unknown) => void;
}

/** The current activity's heartbeat, or undefined outside an activity. */
function currentHeartbeat(): ((details?: unknown) => void) | undefined {
  try {
    const context = Context.current();
    return (details) => context.heartbeat(details);
  } catch {
    return undefined;
  }
}

/**
 * Runs `work` beating every `intervalMs` until it settles, so a worker that dies mid-step is noticed
 * within the heartbeat timeout. No beat up front: the heartbeat timeout runs from the activity's
 * start anyway, and a step that ends inside one interval costs the server no heartbeat write at all.
 */
export async function withHeartbeat<T>(work: () => Promise<T>, options: HeartbeatOptions = {}): Promise<T> {
  const heartbeat = options.heartbeat ?? currentHeartbeat();
  const { details } = options;
  const beat = setInterval(
    () => (details ? heartbeat?.(details()) : heartbeat?.()),
    options.intervalMs ?? 5_000,
  );
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}
