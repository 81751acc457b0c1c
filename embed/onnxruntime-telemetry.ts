/**
 * onnxruntime 1.30's Linux build starts Microsoft's telemetry client (1DS) with the first session: it
 * may upload over HTTPS when a CA bundle is found, and leaves an empty /tmp/mat-debug-<pid>.log behind
 * every process. A crawler that promises what traffic it sends must not phone home, so it is off
 * unless the operator set ORT_DISABLE_TELEMETRY. onnxruntime reads the variable from the process's
 * real environment when it creates its environment, at the first session: a worker thread's
 * process.env is a copy native code cannot see, so threads that load a model are started after this
 * ran on the main thread (embed/embedder-thread.ts). Kept apart from onnx-session.ts so the main
 * thread can call it without loading onnxruntime.
 */
export function disableOnnxruntimeTelemetry(): void {
  process.env.ORT_DISABLE_TELEMETRY ??= '1';
}
