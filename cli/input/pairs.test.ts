import { describe, expect, it } from 'vitest';
import { parseMetadata, parsePair, parseProperties } from './pairs.js';

describe('key=value pairs', () => {
  it('reads key=value as a string, keeping any = in the value', () => {
    expect(parsePair('plan=pro', '--metadata')).toEqual(['plan', 'pro']);
    expect(parsePair('query=a=b', '--metadata')).toEqual(['query', 'a=b']);
    expect(parsePair('empty=', '--metadata')).toEqual(['empty', '']);
  });

  it('reads key:=json as JSON', () => {
    expect(parsePair('seats:=5', '--property')).toEqual(['seats', 5]);
    expect(parsePair('kick_member:=false', '--property')).toEqual(['kick_member', false]);
    expect(parseProperties(['files:=["a","b"]', 'expires:={"ttl":1,"timeframe":"year"}'])).toEqual({ files: ['a', 'b'], expires: { ttl: 1, timeframe: 'year' } });
  });

  it('refuses a pair without a key or =, and JSON that does not parse', () => {
    expect(() => parsePair('plan', '--metadata')).toThrow('--metadata "plan": expected key=value.');
    expect(() => parsePair('=pro', '--metadata')).toThrow('expected key=value');
    expect(() => parsePair('n:={oops', '--property')).toThrow('"{oops" is not JSON');
  });

  it('allows only strings, numbers and booleans as metadata values', () => {
    expect(parseMetadata(['plan=pro', 'seats:=5', 'beta:=true'])).toEqual({ plan: 'pro', seats: 5, beta: true });
    expect(() => parseMetadata(['tags:=["a"]'])).toThrow('a metadata value is a string, number or boolean');
  });
});
