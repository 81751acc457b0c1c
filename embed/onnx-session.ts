/**
 * The model's onnxruntime session, started from a cached copy of the optimised graph in ORT format
 * when there is a current one. Parsing the 58 MB protobuf of model.onnx and optimising its graph cost
 * every process that loads the model ~200-290 ms of CPU (a cold `gleaner search` pays it on its model
 * thread); the ORT-format copy, read into memory and used in place (its weights too), starts in
 * ~90-150 ms, measured on this machine's AVX2 cores. The copy holds the graph optimised at the
 * `extended` level, which has no hardware-specific layout in it (`all` adds NCHWc layouts, for
 * convolutions, which this kind of model has none of): its vectors were bit-identical to model.onnx
 * run at `all` on 77 texts, and test/embed/onnx-session.test.ts checks that on every run.
 *
 * The copy is written beside model.onnx the first time a process loads it (`model.onnx.ort`, with a
 * stamp of the model file and onnxruntime version it came from), and ignored when either changed.
 * A read-only model directory, or a copy that fails to load, only means the slower start; the copy
 * is simply written again.
 */
import { randomUUID } from 'node:crypto';
import { accessSync, constants, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { disableOnnxruntimeTelemetry } from './onnxruntime-telemetry';

export interface SessionThreads {
  intraOpNumThreads: number;
  /** Let the intra-op threads spin-wait for work (see EmbedderOptions.spinning). */
  spinning: boolean;
}

interface OrtCopyStamp {
  size: number;
  mtimeMs: number;
  onnxruntime: string;
  level: 'extended';
}

/**
 * Model bytes a session runs from in place: onnxruntime reads its weights out of them, so they live
 * exactly as long as the session does.
 */
const bytesInUse = new WeakMap<ort.InferenceSession, Uint8Array>();

let onnxruntimeVersion: string | undefined;
function runtimeVersion(): string {
  onnxruntimeVersion ??= (
    createRequire(import.meta.url)('onnxruntime-node/package.json') as { version: string }
  ).version;
  return onnxruntimeVersion;
}

export function ortCopyPath(modelPath: string): string {
  return `${modelPath}.ort`;
}

function stampOf(modelPath: string): OrtCopyStamp {
  const { size, mtimeMs } = statSync(modelPath);
  return { size, mtimeMs, onnxruntime: runtimeVersion(), level: 'extended' };
}

function currentCopy(modelPath: string): string | undefined {
  const copy = ortCopyPath(modelPath);
  try {
    const saved = JSON.parse(readFileSync(`${copy}.json`, 'utf8')) as Partial<OrtCopyStamp>;
    const now = stampOf(modelPath);
    const current =
      saved.size === now.size &&
      saved.mtimeMs === now.mtimeMs &&
      saved.onnxruntime === now.onnxruntime &&
      saved.level === now.level;
    return current ? copy : undefined;
  } catch {
    return undefined;
  }
}

/** Options every session shares, with onnxruntime session config entries added by the caller. */
function sessionOptions(
  threads: SessionThreads,
  graphOptimizationLevel: 'disabled' | 'extended',
  config: Record<string, string> = {},
): ort.InferenceSession.SessionOptions {
  return {
    // One model call at a time (see OnnxEmbedder), each spread over the intra-op threads.
    executionMode: 'sequential',
    interOpNumThreads: 1,
    intraOpNumThreads: threads.intraOpNumThreads,
    graphOptimizationLevel,
    extra: { session: { intra_op: { allow_spinning: threads.spinning ? '1' : '0' }, ...config } },
  };
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export interface ModelSession {
  session: ort.InferenceSession;
  /** What it was started from: the ORT-format copy, or model.onnx (then the copy was written if it could be). */
  startedFrom: 'ort-copy' | 'onnx';
}

/** Starts a session on model.onnx, or on its current ORT-format copy; writes the copy when it can. */
export async function createModelSession(modelPath: string, threads: SessionThreads): Promise<ModelSession> {
  disableOnnxruntimeTelemetry();
  const copy = currentCopy(modelPath);
  if (copy) {
    try {
      // readFileSync's Buffer is already a Uint8Array of its own: no second 58 MB copy.
      const bytes = readFileSync(copy);
      const session = await ort.InferenceSession.create(
        bytes,
        // Already optimised when it was written.
        sessionOptions(threads, 'disabled', {
          use_ort_model_bytes_directly: '1',
          use_ort_model_bytes_for_initializers: '1',
        }),
      );
      bytesInUse.set(session, bytes);
      return { session, startedFrom: 'ort-copy' };
    } catch {
      // Damaged or from an incompatible build: load model.onnx below, which writes a new copy.
      rmSync(`${copy}.json`, { force: true });
    }
  }
  const plain = sessionOptions(threads, 'extended');
  const fromOnnx = async (options: ort.InferenceSession.SessionOptions): Promise<ModelSession> => ({
    session: await ort.InferenceSession.create(modelPath, options),
    startedFrom: 'onnx',
  });
  if (!writable(path.dirname(modelPath))) return fromOnnx(plain);
  // Unique per writer: threads of one process (the API's query model beside the embed worker) too.
  const temporary = `${ortCopyPath(modelPath)}.${randomUUID()}.tmp`;
  const stamp = stampOf(modelPath);
  let started: ModelSession;
  try {
    started = await fromOnnx({
      ...sessionOptions(threads, 'extended', { save_model_format: 'ORT' }),
      optimizedModelFilePath: temporary,
    });
  } catch {
    // Saving failed (a full disk, say): start without a copy. A broken model.onnx throws here again.
    rmSync(temporary, { force: true });
    return fromOnnx(plain);
  }
  try {
    renameSync(temporary, ortCopyPath(modelPath));
    writeFileSync(`${ortCopyPath(modelPath)}.json`, JSON.stringify(stamp));
  } catch {
    rmSync(temporary, { force: true });
  }
  return started;
}
