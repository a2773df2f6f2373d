import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseForm } from './form-encoding.js';

describe('form bodies with bracket notation', () => {
  it('parses scalars, maps and lists one level deep', () => {
    const parsed = parseForm(
      'charge=ch_1&amount=100&metadata[order_id]=ord+1&metadata[note]=a%26b&expand[]=charge&expand[]=x',
    );
    expect(parsed.kind).toBe('parsed');
    if (parsed.kind !== 'parsed') return;
    expect(parsed.fields.get('charge')).toBe('ch_1');
    expect(parsed.fields.get('metadata')).toEqual(
      new Map([
        ['order_id', 'ord 1'],
        ['note', 'a&b'],
      ]),
    );
    expect(parsed.fields.get('expand')).toEqual(['charge', 'x']);
  });

  it('reports mixed shapes, deeper nesting and bad percent-encoding as malformed', () => {
    for (const body of [
      'a=1&a[b]=2',
      'a[b]=1&a=2',
      'a[]=1&a[b]=2',
      'a[b][c]=1',
      'a=%E0%A4%A',
      '[x]=1',
    ]) {
      expect(parseForm(body).kind, body).toBe('malformed');
    }
  });

  it('round-trips any flat set of string parameters encoded by URLSearchParams', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.stringMatching(/^[a-z_]{1,10}$/), fc.string({ maxLength: 20 })),
        (params) => {
          const parsed = parseForm(new URLSearchParams(params).toString());
          expect(parsed.kind).toBe('parsed');
          if (parsed.kind === 'parsed') expect(Object.fromEntries(parsed.fields)).toEqual(params);
        },
      ),
      { numRuns: 300 },
    );
  });
});
