/**
 * The per-origin frontier: a binary max-heap of scored URLs kept as plain data, so it travels
 * through continue-as-new and replays deterministically. Scores follow seed 000's table —
 * shallower pages, sitemap hints, fresh content (news, blog) and HTML-looking paths first — and
 * ties go to the URL discovered earlier, which keeps the crawl breadth-first.
 */

export interface FrontierItem {
  url: string;
  depth: number;
}

interface Entry extends FrontierItem {
  priority: number;
  seq: number;
}

export interface Frontier {
  heap: Entry[];
  seq: number;
}

export interface ScoreHints {
  /** Came from a sitemap (and is ordered there by its own priority). */
  fromSitemap?: boolean;
  /** Times this URL was linked from the discovering page. */
  inlinks?: number;
}

const FRESH_PATH = /\/(news|blog|blogs|posts|changelog|releases|articles)(\/|$)/i;
const PAGE_EXTENSION = /(\/|\.html?|\.php|\.aspx?|\.jsp|\/[^./]+)$/i;
/** Retries jump the queue: an origin resumes where it was throttled. */
const RETRY_PRIORITY = 1_000;

export function scoreUrl(item: FrontierItem, hints: ScoreHints = {}): number {
  let score = -0.1 * item.depth + 0.2 * Math.min(hints.inlinks ?? 1, 10);
  let path = '';
  try {
    path = new URL(item.url).pathname;
  } catch {
    return score;
  }
  if (FRESH_PATH.test(path)) score += 0.5;
  if (PAGE_EXTENSION.test(path)) score += 0.2;
  if (hints.fromSitemap) score += 0.1;
  return Math.round(score * 1000) / 1000;
}

export function emptyFrontier(): Frontier {
  return { heap: [], seq: 0 };
}

/** Accepts the plain arrays older workflow runs carried, in their order. */
export function toFrontier(value: Frontier | FrontierItem[] | undefined): Frontier {
  if (!value) return emptyFrontier();
  if (!Array.isArray(value)) return value;
  const frontier = emptyFrontier();
  for (const item of value) push(frontier, item, 0);
  return frontier;
}

export function size(frontier: Frontier): number {
  return frontier.heap.length;
}

export function push(frontier: Frontier, item: FrontierItem, priority: number): void {
  frontier.heap.push({ url: item.url, depth: item.depth, priority, seq: frontier.seq++ });
  siftUp(frontier.heap, frontier.heap.length - 1);
}

/** Puts an item back to be taken next (a throttled URL that must be retried first). */
export function pushFirst(frontier: Frontier, item: FrontierItem): void {
  const top = frontier.heap[0]?.priority ?? 0;
  push(frontier, item, Math.max(top, 0) + RETRY_PRIORITY);
}

export function pop(frontier: Frontier): FrontierItem | undefined {
  const { heap } = frontier;
  const top = heap[0];
  if (!top) return undefined;
  const last = heap.pop() as Entry;
  if (heap.length > 0) {
    heap[0] = last;
    siftDown(heap, 0);
  }
  return { url: top.url, depth: top.depth };
}

/**
 * Keeps the `keep` best entries and returns the rest, best first. A list sorted best first is a
 * valid heap, so the kept part needs no rebuilding.
 */
export function trimTo(frontier: Frontier, keep: number): FrontierItem[] {
  if (frontier.heap.length <= keep) return [];
  const sorted = [...frontier.heap].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  frontier.heap = sorted.slice(0, Math.max(0, keep));
  return sorted.slice(Math.max(0, keep)).map(({ url, depth }) => ({ url, depth }));
}

/** Empties the frontier; returns how many items were dropped. */
export function clear(frontier: Frontier): number {
  const dropped = frontier.heap.length;
  frontier.heap = [];
  return dropped;
}

function before(a: Entry, b: Entry): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq);
}

function siftUp(heap: Entry[], index: number): void {
  let i = index;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(heap[i] as Entry, heap[parent] as Entry)) break;
    [heap[i], heap[parent]] = [heap[parent] as Entry, heap[i] as Entry];
    i = parent;
  }
}

function siftDown(heap: Entry[], index: number): void {
  let i = index;
  for (;;) {
    const left = 2 * i + 1;
    const right = left + 1;
    let best = i;
    if (left < heap.length && before(heap[left] as Entry, heap[best] as Entry)) best = left;
    if (right < heap.length && before(heap[right] as Entry, heap[best] as Entry)) best = right;
    if (best === i) return;
    [heap[i], heap[best]] = [heap[best] as Entry, heap[i] as Entry];
    i = best;
  }
}
