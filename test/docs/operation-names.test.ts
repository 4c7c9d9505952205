import { describe, expect, it } from 'vitest';
import { baseName, endpointNames } from '../../src/docs/operation-names.ts';

/** Operation and MCP tool names: method and path in snake case, unique, stable, at most 64 characters. */
const endpoint = (id: string, method: string, path: string, createdAt = '2026-01-01T00:00:00.000Z') => ({ doc: { _id: id, method, path, createdAt } });

describe('baseName', () => {
  it.each([
    ['GET', '/api/shop/products', 'get_api_shop_products'],
    ['POST', '/api/shops/:shopId/items', 'post_api_shops_shopId_items'],
    ['DELETE', '/api/a-b/c.d~e', 'delete_api_a_b_c_d_e'],
    ['GET', '/', 'get'],
  ])('%s %s → %s', (method, path, name) => {
    expect(baseName(method, path)).toBe(name);
  });
});

describe('endpointNames', () => {
  it('tells clashing paths apart by creation order, so the older keeps its name', () => {
    const table = {
      endpoints: [
        endpoint('b', 'GET', '/api/a_b', '2026-01-02T00:00:00.000Z'),
        endpoint('a', 'GET', '/api/a-b', '2026-01-01T00:00:00.000Z'),
        endpoint('c', 'POST', '/api/a-b', '2026-01-03T00:00:00.000Z'),
      ],
    };
    expect(Object.fromEntries(endpointNames(table))).toEqual({ a: 'get_api_a_b', b: 'get_api_a_b_2', c: 'post_api_a_b' });
  });

  it('keeps long names within 64 characters and still unique', () => {
    const long = '/api/' + 'segment/'.repeat(12) + 'end';
    const names = endpointNames({ endpoints: [endpoint('x', 'GET', long), endpoint('y', 'GET', `${long}s`)] });
    const [x, y] = [names.get('x') as string, names.get('y') as string];
    expect(x.length).toBeLessThanOrEqual(64);
    expect(y.length).toBeLessThanOrEqual(64);
    expect(x).not.toBe(y);
    expect(x).toMatch(/^get_api_segment_segment_.*_[0-9a-f]{8}$/);
  });
});
