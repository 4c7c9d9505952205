import { describe, expect, it } from 'vitest';
import { isId, newId, newIds } from '../../src/lib/ids.ts';

describe('ids', () => {
  it('newIds gives ids of the same form as newId, all distinct, continuing the same sequence', () => {
    const before = newId();
    const batch = newIds(1000);
    const after = newId();
    expect(batch).toHaveLength(1000);
    for (const id of [before, ...batch, after]) expect(isId(id)).toBe(true);
    expect(new Set([before, ...batch, after]).size).toBe(1002);
    // Same process part (characters 8–17) as newId's, so both stores' ids look alike.
    expect(new Set([before, ...batch, after].map((id) => id.slice(8, 18))).size).toBe(1);
  });

  it('newIds(0) is empty', () => {
    expect(newIds(0)).toEqual([]);
  });
});
