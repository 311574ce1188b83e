import { format, inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/connector/index.js';
import { REDACTED, redactSecrets, wrapCredentials } from '../../src/connector/internal.js';

const value = 'hunter2-very-secret';

describe('Secret', () => {
  it('reveals its value only through reveal()', () => {
    expect(new Secret(value).reveal()).toBe(value);
  });

  it('never shows its value when turned into text', () => {
    const secret = new Secret(value);
    const shown = [
      String(secret),
      `${secret}`,
      // biome-ignore lint/style/useTemplate: the + operator converts differently from a template string
      '' + secret,
      secret.toString(),
      JSON.stringify(secret),
      JSON.stringify({ nested: { secret, list: [secret] } }),
      inspect(secret),
      inspect({ nested: { secret } }, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
      format('%s %o %O %j', secret, secret, secret, secret),
    ];
    for (const text of shown) {
      expect(text).not.toContain(value);
      expect(text).toContain(REDACTED);
    }
  });

  it('does not copy its value into spreads, keys or clones', () => {
    const secret = new Secret(value);
    expect(Object.keys(secret)).toEqual([]);
    expect(JSON.stringify({ ...secret })).not.toContain(value);
    expect(inspect(structuredClone(secret))).not.toContain(value);
  });

  it('rejects a value that is not a string with a ValidationError that does not echo it', () => {
    expect(() => new Secret(42 as unknown as string)).toThrow(
      expect.objectContaining({
        code: 'validation',
        message: 'Invalid secret: Expected a string, got number',
      }),
    );
  });
});

describe('wrapCredentials', () => {
  it('wraps every field in a Secret, non-strings as their JSON text', () => {
    const credentials = wrapCredentials({
      username: 'ada',
      password: value,
      pin: 1234,
      tokens: { refresh: 'refresh-secret' },
    });
    expect(Object.keys(credentials)).toEqual(['username', 'password', 'pin', 'tokens']);
    for (const field of Object.values(credentials)) expect(field).toBeInstanceOf(Secret);
    expect(credentials.password?.reveal()).toBe(value);
    expect(credentials.pin?.reveal()).toBe('1234');
    expect(JSON.parse(credentials.tokens?.reveal() ?? '')).toEqual({ refresh: 'refresh-secret' });

    const shown = `${JSON.stringify(credentials)} ${inspect(credentials)}`;
    for (const secret of [value, 'refresh-secret', '1234']) expect(shown).not.toContain(secret);
  });

  it('returns a frozen object and drops values JSON cannot carry', () => {
    const credentials = wrapCredentials({ password: value, callback: () => value, missing: undefined });
    expect(Object.isFrozen(credentials)).toBe(true);
    expect(Object.keys(credentials)).toEqual(['password']);
  });
});

describe('redactSecrets', () => {
  it('replaces every occurrence of each secret', () => {
    expect(redactSecrets(`login ${value} failed; retried with ${value}`, [new Secret(value)])).toBe(
      `login ${REDACTED} failed; retried with ${REDACTED}`,
    );
  });

  it('accepts plain strings and skips empty and missing ones', () => {
    expect(redactSecrets('user ada pw x1', ['x1', '', undefined])).toBe(`user ada pw ${REDACTED}`);
    expect(redactSecrets('nothing to hide', [])).toBe('nothing to hide');
  });

  it('replaces the JSON-escaped and URL-encoded forms of a secret', () => {
    const tricky = 'p"a\\ss w@rd';
    const text = `body ${JSON.stringify({ password: tricky })} url ?pw=${encodeURIComponent(tricky)}`;
    const result = redactSecrets(text, [tricky]);
    expect(result).not.toContain('a\\\\ss');
    expect(result).not.toContain(encodeURIComponent(tricky));
    expect(result).toBe(`body {"password":"${REDACTED}"} url ?pw=${REDACTED}`);
  });

  it('replaces a secret that contains another one whole', () => {
    expect(redactSecrets('token abcdef', ['abc', 'abcdef'])).toBe(`token ${REDACTED}`);
  });

  it('does not match a short secret inside a placeholder it wrote', () => {
    expect(redactSecrets('code e1 and e', ['e1', 'e'])).toBe(`cod${REDACTED} ${REDACTED} and ${REDACTED}`);
  });

  it('treats regular expression characters in a secret literally', () => {
    expect(redactSecrets('a.*b and axxb', ['a.*b'])).toBe(`${REDACTED} and axxb`);
  });

  it('redacts bearer tokens, authorization headers and URL passwords whatever their value', () => {
    expect(redactSecrets('sent Bearer eyJhbGciOi.J9.abc-_= to the server')).toBe(
      `sent Bearer ${REDACTED} to the server`,
    );
    expect(redactSecrets('{"Authorization":"Basic YWRhOmh1bnRlcjI=","accept":"json"}')).toBe(
      `{"Authorization":"${REDACTED}","accept":"json"}`,
    );
    expect(redactSecrets('connect https://ada:pa55@sap.example.com/api failed')).toBe(
      `connect https://${REDACTED}@sap.example.com/api failed`,
    );
  });
});
