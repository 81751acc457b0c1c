/**
 * The workflow bundle, built by the SDK's webpack step (about 5 s) at most once per version of
 * the workflow sources: the result is cached on disk under node_modules/.cache, keyed by a hash
 * of every file the bundle can contain (workflows/ and domain/ with their subfolders, the activity types, the lock file).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { logger } from '../infra/logger';
import { workflowSourceHash } from './workflow-sources';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WORKFLOWS_PATH = path.join(ROOT, 'workflows', 'index.ts');
/**
 * Modules initialised once per workflow thread and shared by its workflow executions, instead of once
 * per execution like the rest of the bundle: stateless ones only (the SDK freezes their exports).
 * workflows/preloaded.ts brings zod and the crawl spec's schema; tldts is a stateless library. zod
 * itself cannot be named here: it declares itself side-effect free, so webpack drops a bare
 * `require('zod')` and it was never preloaded while it was listed.
 */
export const PRELOADED_MODULES: readonly string[] = ['tldts', path.join(ROOT, 'workflows', 'preloaded.ts')];
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'gleaner-workflows');

async function buildOrLoad(): Promise<WorkflowBundleWithSourceMap> {
  // The bundle options are part of the key: a changed preload list must not reuse an older bundle.
  const key = `${workflowSourceHash(ROOT)}-${createHash('sha256')
    .update(JSON.stringify(PRELOADED_MODULES.map((m) => (path.isAbsolute(m) ? path.relative(ROOT, m) : m))))
    .digest('hex')
    .slice(0, 8)}`;
  const file = path.join(CACHE_DIR, `${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as WorkflowBundleWithSourceMap;
  } catch {
    // Not cached yet (or unreadable): build it.
  }
  const started = Date.now();
  const bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: new DefaultLogger('WARN'),
    preloadModules: [...PRELOADED_MODULES],
  });
  try {
    mkdirSync(CACHE_DIR, { recursive: true });
    const tmp = `${file}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify({ code: bundle.code, sourceMap: bundle.sourceMap }));
    renameSync(tmp, file);
  } catch (error) {
    logger.warn({ err: error }, 'could not cache the workflow bundle');
  }
  logger.debug({ ms: Date.now() - started, key }, 'workflow bundle built');
  return bundle;
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** The workflow bundle: from the on-disk cache when the sources are unchanged, else built. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= buildOrLoad();
  return bundle;
}
