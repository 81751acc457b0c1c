/**
 * Greedy packing of an ordered list into consecutive groups, each within a count and a cost budget.
 * Used for the crawl workflow's command tasks (payload bytes) and the embedder's model batches
 * (tokens). An item that alone exceeds the cost budget still gets a group of its own: splitting it
 * is the caller's business, dropping it never is.
 */
export interface PackBudget<T> {
  /** Most items in one group. */
  maxCount: number;
  /** Most summed cost in one group (Infinity for no cost limit). */
  maxCost: number;
  cost: (item: T) => number;
}

export function packByBudget<T>(items: readonly T[], budget: PackBudget<T>): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let spent = 0;
  for (const item of items) {
    const cost = budget.cost(item);
    if (group.length > 0 && (group.length >= budget.maxCount || spent + cost > budget.maxCost)) {
      groups.push(group);
      group = [];
      spent = 0;
    }
    group.push(item);
    spent += cost;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
