/**
 * Runs a function as a worker would run an activity: inside an activity Context (attempt 1 unless
 * told, a cancellation signal, a quiet logger), so `Context.current()`, heartbeats and sleeps work
 * without a Temporal server.
 */
import { asyncLocalStorage, Context, type Info } from '@temporalio/activity';

export function runAsActivity<T>(
  activityType: string,
  work: () => Promise<T>,
  /** A later attempt plays a Temporal retry of the same activity. */
  { attempt = 1 }: { attempt?: number } = {},
): Promise<T> {
  const info = { attempt, activityType, activityId: '1' } as unknown as Info;
  const cancel = new AbortController();
  const never = new Promise<never>(() => {});
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
  const context = new Context(
    info,
    never,
    cancel.signal,
    () => {},
    undefined,
    quiet,
    undefined as never,
    undefined as never,
  );
  return asyncLocalStorage.run(context, work);
}
