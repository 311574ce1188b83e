import { describe, expect, it } from 'vitest';
import { formatODataDate, parseODataDate, quote, readLiteral, readODataError } from '../src/odata.js';

describe('OData V2 string literals', () => {
  it.each(['LOCAL_TGW', "O'Brien", "''", '', 'a b & c'])('reads back what it quotes: %j', (value) => {
    expect(readLiteral(quote(value))).toBe(value);
  });

  it.each(['LOCAL_TGW', "'open", "'a'b'", "'''", '"double"'])(
    'refuses %j, which is not a literal',
    (text) => {
      expect(readLiteral(text)).toBeUndefined();
    },
  );
});

describe('OData V2 dates', () => {
  it('reads /Date(ms)/, with or without an offset, and writes it back', () => {
    expect(parseODataDate('/Date(1424149556000)/')).toEqual(new Date(1424149556000));
    expect(parseODataDate('/Date(1424149556000+0000)/')).toEqual(new Date(1424149556000));
    expect(formatODataDate(new Date(1424149556000))).toBe('/Date(1424149556000)/');
    expect(parseODataDate('2015-02-17T05:05:56Z')).toBeUndefined();
  });
});

describe('OData V2 error bodies', () => {
  it('reads code and message, and nothing from a body of another shape', () => {
    expect(readODataError({ error: { code: 'X/1', message: { lang: 'en', value: 'No' } } })).toEqual({
      code: 'X/1',
      message: 'No',
    });
    expect(readODataError({ error: { code: '', message: 'Plain' } })).toEqual({ message: 'Plain' });
    expect(readODataError('<html/>')).toEqual({});
    expect(readODataError({ error: null })).toEqual({});
  });
});
