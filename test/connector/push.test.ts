import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Connector, incremental, push, Secret, verifyHmacSignature } from '../../src/connector/index.js';
import { ValidationError } from '../../src/errors.js';
import { ConnectorWorker } from '../../src/worker/index.js';

const secret = 'a-shared-secret-of-the-webhook';
const body = Buffer.from('{"webhookEvent":"jira:issue_updated","issue":{"key":"PO-1"}}');
const hex = createHmac('sha256', secret).update(body).digest('hex');

describe('verifyHmacSignature', () => {
  it('accepts the HMAC of the raw body, behind its prefix, in either case of hex', () => {
    expect(verifyHmacSignature({ secret, body, signature: `sha256=${hex}`, prefix: 'sha256=' })).toBe(true);
    expect(verifyHmacSignature({ secret, body, signature: hex.toUpperCase() })).toBe(true);
    expect(verifyHmacSignature({ secret: new Secret(secret), body: body.toString(), signature: hex })).toBe(
      true,
    );
    const base64 = createHmac('sha1', secret).update(body).digest('base64');
    expect(
      verifyHmacSignature({ secret, body, signature: base64, algorithm: 'sha1', encoding: 'base64' }),
    ).toBe(true);
  });

  it('refuses a forged, missing, truncated or unprefixed signature, and a body changed by one byte', () => {
    const forged = createHmac('sha256', 'another-secret').update(body).digest('hex');
    expect(verifyHmacSignature({ secret, body, signature: forged })).toBe(false);
    expect(verifyHmacSignature({ secret, body, signature: undefined })).toBe(false);
    expect(verifyHmacSignature({ secret, body, signature: '' })).toBe(false);
    expect(verifyHmacSignature({ secret, body, signature: hex.slice(0, -2) })).toBe(false);
    expect(verifyHmacSignature({ secret, body, signature: hex, prefix: 'sha256=' })).toBe(false);
    const changed = Buffer.from(body);
    changed[changed.length - 2] = 0x32;
    expect(verifyHmacSignature({ secret, body: changed, signature: hex })).toBe(false);
  });

  it('refuses an empty secret as a configuration problem, not a forgery', () => {
    expect(() => verifyHmacSignature({ secret: '', body, signature: hex })).toThrow(ValidationError);
  });
});

const options = { service: { baseUrl: 'http://127.0.0.1:1', token: 'connector-token' } };
const changes = async function* () {};

/** A connector whose source is whatever the test gives, as plain JavaScript could give it. */
class Declared extends Connector {
  readonly tasks = {};
  constructor(readonly source: Connector['source']) {
    super();
  }
}

describe('a push path, as a worker checks it', () => {
  it('is refused without lookup() beside it, naming lookup', () => {
    const source = { ...incremental({ changes }), push: push({ verify: () => true, approvalIds: () => [] }) };
    const refused = captured(() => new ConnectorWorker(new Declared(source), options));
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).issues).toMatchObject([{ path: ['source', 'lookup'] }]);
    expect((refused as ValidationError).message).toMatch(/lookup\(\)/);
  });

  it('is refused without a verifier, naming verify', () => {
    const source = { ...incremental({ changes, lookup: changes }), push: { approvalIds: () => [] } };
    const refused = captured(() => new ConnectorWorker(new Declared(source as never), options));
    expect((refused as ValidationError).issues).toMatchObject([{ path: ['source', 'push', 'verify'] }]);
  });

  it('is taken with lookup() and a verifier', () => {
    const source = incremental({
      changes,
      lookup: changes,
      push: push({ verify: () => false, approvalIds: () => [] }),
    });
    expect(() => new ConnectorWorker(new Declared(source), options)).not.toThrow();
  });
});

function captured(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}
