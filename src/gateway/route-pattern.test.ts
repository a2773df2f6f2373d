import { describe, expect, it } from 'vitest';
import {
  compareSpecificity,
  isUnderPrefix,
  matchSegments,
  normaliseQuery,
  parseRoute,
  queryPairs,
  type RoutePattern,
  splitPath,
} from './route-pattern.js';

const route = (text: string): RoutePattern => {
  const parsed = parseRoute(text);
  if (parsed.kind !== 'parsed') throw new Error(parsed.message);
  return parsed.pattern;
};
const segments = (path: string): readonly string[] => {
  const split = splitPath(path);
  if (split.kind !== 'split') throw new Error(split.message);
  return split.segments;
};

describe('route templates', () => {
  it('parses methods, literals, parameters and a final wildcard, and gives one shape per route', () => {
    const pattern = route('post /v1/refunds/:id');
    expect(pattern).toMatchObject({ method: 'POST', template: '/v1/refunds/:id', rest: false });
    expect(pattern.shape).toBe('POST /v1/refunds/:');
    expect(route('POST /v1/refunds/:refund').shape).toBe(pattern.shape);
    expect(route('GET /files/*')).toMatchObject({ rest: true, shape: 'GET /files/*' });
  });

  it('refuses templates that are not routes', () => {
    for (const text of [
      '/v1/refunds',
      'POST v1',
      'POST /a/../b',
      'POST /a/:x/:x',
      'P0ST /a',
      'GET /a b',
    ]) {
      expect(parseRoute(text).kind, text).toBe('invalid');
    }
  });

  it('matches segments exactly and decodes parameters', () => {
    const pattern = route('GET /v1/refunds/:id');
    expect(matchSegments(pattern, segments('/v1/refunds/re%5F1'))).toEqual({ id: 're_1' });
    expect(matchSegments(pattern, segments('/v1/refunds'))).toBeUndefined();
    expect(matchSegments(pattern, segments('/v1/refunds/re_1/extra'))).toBeUndefined();
    expect(matchSegments(route('GET /files/*'), segments('/files'))).toBeUndefined();
    expect(matchSegments(route('GET /files/*'), segments('/files/a/b'))).toEqual({});
  });

  it('orders literals before parameters and fixed routes before wildcards', () => {
    const sorted = [route('GET /v1/:x'), route('GET /v1/*'), route('GET /v1/search')].sort(
      compareSpecificity,
    );
    expect(sorted.map((p) => p.template)).toEqual(['/v1/search', '/v1/:x', '/v1/*']);
  });
});

describe('request paths', () => {
  it('refuses paths that could name another resource upstream', () => {
    for (const path of [
      '/v1/refunds/..%2Fcharges',
      '/v1/%2e%2e/charges',
      '/v1//refunds',
      '/v1/refunds/%5Cx',
      '/v1/%00',
      '/v1/%zz',
      'v1/refunds',
    ]) {
      expect(splitPath(path).kind, path).toBe('invalid');
    }
  });

  it('keeps prefixes segment-safe', () => {
    expect(isUnderPrefix(segments('/robot/arm'), segments('/robot'))).toBe(true);
    expect(isUnderPrefix(segments('/robot'), segments('/robot'))).toBe(true);
    expect(isUnderPrefix(segments('/robotics'), segments('/robot'))).toBe(false);
  });
});

describe('query normalisation', () => {
  it('sorts by name and keeps repeated values in order', () => {
    const pairs = queryPairs('?b=2&a=1&c=%20x&a=0');
    expect(pairs).toEqual([
      ['b', '2'],
      ['a', '1'],
      ['c', ' x'],
      ['a', '0'],
    ]);
    expect(normaliseQuery(pairs ?? [])).toBe('a=1&a=0&b=2&c=%20x');
    expect(normaliseQuery(queryPairs('a=0&a=1') ?? [])).not.toBe(
      normaliseQuery(queryPairs('a=1&a=0') ?? []),
    );
    expect(queryPairs('a=%zz')).toBeUndefined();
  });
});
