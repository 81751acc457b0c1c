/**
 * Every model thread of this process that has not ended, each with how to stop it safely. Apart
 * from embed/embedder-thread.ts so that a command exiting (cli/main.ts) asks it without importing
 * the thread machinery, which commands that never embed would load only to find nothing running.
 */
export const liveThreads = new Set<() => Promise<void>>();

/**
 * Stops every model thread of this process, each once it is safe to: for a process about to call
 * process.exit (cli/main.ts). process.exit terminates worker threads on the spot, and one stopped
 * while onnxruntime-node loads its model, or runs it, aborts the whole process (`terminate called
 * after throwing an instance of 'Napi::Error'`, exit 134), so a command that failed early, while
 * its model thread was still loading, lost its exit status and message to that. Waits at most
 * `waitMs` (a model download can be slow); after that the caller exits regardless.
 */
export async function stopLiveThreads(waitMs = 30_000): Promise<void> {
  if (liveThreads.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolveTimeout) => {
    timer = setTimeout(resolveTimeout, waitMs);
  });
  const stopping = Promise.allSettled([...liveThreads].map((stop) => stop()));
  await Promise.race([stopping, timeout]);
  clearTimeout(timer);
}
