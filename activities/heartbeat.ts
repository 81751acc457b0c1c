import { Context } from '@temporalio/activity';

/**
 * Beats every 5 s while a long step runs as a Temporal activity, so a worker that dies mid-step is
 * noticed within the heartbeat timeout; a no-op timer when the code is called directly (benches, tests).
 */
function startHeartbeat(): ReturnType<typeof setInterval> {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    context = undefined;
  }
  return setInterval(() => context?.heartbeat(), 5_000);
}

/** Runs `work` beating every 5 s (startHeartbeat) until it settles. */
export async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const beat = startHeartbeat();
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}
