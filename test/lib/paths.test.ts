import { describe, expect, it } from 'vitest';
import { splitPath, unversionedPaths, versionedPath } from '../../src/lib/paths.ts';

describe('versioned paths', () => {
  it.each([
    ['/api/shop/items', 'v1', '/api/v1/shop/items'],
    ['/api', 'v2', '/api/v2'],
    ['/orders', 'v1', '/v1/orders'],
    ['/', 'v3', '/v3'],
  ])('%s with %s is served at %s, and that path leads back to it', (path, version, alias) => {
    expect(versionedPath(path, version)).toBe(alias);
    expect(unversionedPaths(alias)).toEqual([path]);
  });

  it.each(['/api/shop', '/v1/api/x', '/api/v12345/x', '/vx/a', '/'])('%s is nobody\'s alias', (path) => {
    expect(unversionedPaths(path)).toEqual([]);
  });
});

describe('splitPath', () => {
  it.each([
    ['/api/shop/items', ['api', 'shop', 'items']],
    ['api/shop', ['api', 'shop']],
    ['//api//shop/', ['api', 'shop']],
    ['/a%2Fb/c', ['a%2Fb', 'c']],
    ['/', []],
    ['', []],
    ['///', []],
  ])('%j has the segments %j', (path, segments) => {
    expect(splitPath(path)).toEqual(segments);
  });
});
