/**
 * The walk every chrome remover after the first pass shares: over the kept elements in document
 * order, passing over the subtree of anything already removed, with one `drop` that removes an
 * element and marks its subtree, and one element-to-index map built only when a remover first needs
 * to climb from an element to its ancestors (most pages never do).
 */
import type { KeptElements } from './kept-elements';

/** One chrome-removal run over a candidate: its kept elements and what has been removed so far. */
export interface Removal {
  readonly root: Element;
  readonly tree: KeptElements;
  /** 1 for each element removed (itself, not its descendants: the walk passes over those). */
  readonly removed: Uint8Array;
  /** Removes element `i` (and so its subtree) from the DOM. */
  drop(i: number): void;
  /** The index of a kept element in `tree.els`, or undefined for one the first walk removed. */
  indexOf(el: Element): number | undefined;
}

export function startRemoval(root: Element, tree: KeptElements): Removal {
  const removed = new Uint8Array(tree.els.length);
  let index: Map<Element, number> | undefined;
  return {
    root,
    tree,
    removed,
    drop(i) {
      removed[i] = 1;
      tree.els[i]?.remove();
    },
    indexOf(el) {
      if (index === undefined) {
        index = new Map();
        for (let j = 0; j < tree.els.length; j++) index.set(tree.els[j] as Element, j);
      }
      return index.get(el);
    },
  };
}

/**
 * What a visit asks of the walk: `'drop'` removes the element and passes over its subtree, `'skip'`
 * keeps it but passes over its subtree, a number passes over everything up to that index (a remover
 * that dropped an ancestor's block), and nothing goes on into the element's children.
 */
export type Step = 'drop' | 'skip' | number | undefined;

/** Visits each element still standing, in document order; see `Step` for what a visit returns. */
export function forEachStanding(removal: Removal, visit: (i: number, el: Element) => Step): void {
  const { removed, tree } = removal;
  const { els, last } = tree;
  for (let i = 0; i < els.length; i++) {
    if (removed[i]) {
      i = last[i] ?? i;
      continue;
    }
    const step = visit(i, els[i] as Element);
    if (step === undefined) continue;
    if (step === 'drop') removal.drop(i);
    if (typeof step === 'number') i = Math.max(i, step);
    else i = last[i] ?? i;
  }
}
