/**
 * Loaded once per workflow thread, before any workflow runs, and shared by every workflow execution
 * on it (workers/workflow-bundle.ts lists it in `preloadModules`). Every other module of the bundle is
 * initialised afresh for each workflow the worker caches: zod alone cost each cached workflow ~0.4 MB
 * of the thread's heap, and the crawl spec's schema, which every origin workflow builds to fill the
 * spec's defaults, ~0.7 MB more; shared, they cost once per thread.
 *
 * After preloading, the SDK deep-freezes what the shared modules export. zod writes into its own
 * module objects on first use (the default locale on the first error message, whether `new Function`
 * is allowed on the first object parse), so one good and one bad spec are parsed here, before the
 * freeze. Only stateless code may be shared: crawl-spec's one module variable is its schema, built
 * here once and never changed.
 */
import { parseCrawlSpec } from '../domain/crawl-spec';

parseCrawlSpec({ seeds: ['http://preload.invalid/'] }, 'preload');
try {
  parseCrawlSpec({ seeds: [] }, 'preload');
} catch {
  // Expected: the bad spec only warms zod's error path.
}
