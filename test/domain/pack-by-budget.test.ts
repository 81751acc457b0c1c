import { describe, expect, it } from 'vitest';
import { packByBudget } from '../../domain/pack-by-budget';

const byLength = { cost: (s: string) => s.length };

describe('packByBudget', () => {
  it('closes a group at the count limit', () => {
    expect(packByBudget(['a', 'b', 'c', 'd', 'e'], { ...byLength, maxCount: 2, maxCost: 100 })).toEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['e'],
    ]);
  });

  it('closes a group before the item that would pass the cost budget', () => {
    expect(packByBudget(['aaa', 'bb', 'c', 'dddd'], { ...byLength, maxCount: 10, maxCost: 5 })).toEqual([
      ['aaa', 'bb'],
      ['c', 'dddd'],
    ]);
  });

  it('gives an item above the budget a group of its own and never drops it', () => {
    const groups = packByBudget(['a', 'xxxxxxxx', 'b'], { ...byLength, maxCount: 10, maxCost: 3 });
    expect(groups).toEqual([['a'], ['xxxxxxxx'], ['b']]);
  });

  it('keeps order and every item', () => {
    const items = Array.from({ length: 97 }, (_, i) => 'x'.repeat((i * 7) % 11));
    const groups = packByBudget(items, { ...byLength, maxCount: 6, maxCost: 20 });
    expect(groups.flat()).toEqual(items);
    for (const group of groups) {
      expect(group.length).toBeLessThanOrEqual(6);
      if (group.length > 1) expect(group.reduce((sum, s) => sum + s.length, 0)).toBeLessThanOrEqual(20);
    }
  });

  it('returns no groups for no items', () => {
    expect(packByBudget([], { ...byLength, maxCount: 1, maxCost: 1 })).toEqual([]);
  });
});
