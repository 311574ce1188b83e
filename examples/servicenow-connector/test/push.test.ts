import { type PushDelivery, Secret } from 'approval-connector-kit';
import { describe, expect, it } from 'vitest';
import { ServiceNowDeliveryError } from '../src/errors.js';
import {
  DELIVERY_HEADER,
  deliveryIdOf,
  parseDelivery,
  SIGNATURE_HEADER,
  signBody,
  verifyDelivery,
} from '../src/push.js';

// The push path's pure functions: a delivery of the business rules verified before it is read, and read.
const SECRET = 'push-secret-0042';
const SYS_ID = 'b5a7e2c1d0f14a3b9c8d7e6f5a4b3c2d';

function delivery(body: unknown, headers: Record<string, string | undefined> = {}): PushDelivery {
  const raw = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return {
    body: raw,
    headers: { [SIGNATURE_HEADER]: signBody(raw, SECRET), [DELIVERY_HEADER]: 'a1b2', ...headers },
  };
}

const rule = {
  table: 'sysapproval_approver',
  sys_id: SYS_ID,
  operation: 'update',
  sys_updated_on: '2026-03-02 09:00:05',
  sys_mod_count: '1',
};

describe('verifyDelivery', () => {
  it('accepts the signature of the raw body under the shared secret, as GlideCertificateEncryption.generateMac writes it', () => {
    // HMAC-SHA256 of "{}" keyed "push-secret-0042", in base64: what generateMac(base64Encode(secret), 'HmacSHA256', '{}') gives.
    expect(signBody('{}', SECRET)).toBe('sha256=yBCR+Sl/8Oa7mWLAQ/mIFMsYKl+IqR/MdOK2H3vY5CI=');
    expect(verifyDelivery(delivery(rule), SECRET)).toBe(true);
    expect(verifyDelivery(delivery(rule), new Secret(SECRET))).toBe(true);
  });

  it('refuses a forged or missing signature, another secret, a body changed after signing, and any without a secret', () => {
    const signed = delivery(rule);
    const tampered = { ...signed, body: Buffer.from(signed.body.toString().replace('update', 'delete')) };

    expect(verifyDelivery(tampered, SECRET)).toBe(false);
    expect(verifyDelivery(signed, 'another-secret')).toBe(false);
    expect(verifyDelivery(signed, undefined)).toBe(false);
    expect(verifyDelivery(delivery(rule, { [SIGNATURE_HEADER]: undefined }), SECRET)).toBe(false);
    expect(verifyDelivery(delivery(rule, { [SIGNATURE_HEADER]: 'sha256=' }), SECRET)).toBe(false);
    // The digest in hex rather than base64, as another source would write it.
    const hex = `sha256=${Buffer.from(signBody(signed.body, SECRET).slice(7), 'base64').toString('hex')}`;
    expect(verifyDelivery(delivery(rule, { [SIGNATURE_HEADER]: hex }), SECRET)).toBe(false);
    expect(() => verifyDelivery(signed, '')).toThrow(/secret/);
  });
});

describe('parseDelivery and deliveryIdOf', () => {
  it('tells the record a delivery is about and how it changed, and its delivery id', () => {
    expect(parseDelivery(delivery(rule))).toEqual(rule);
    const deleted = { ...rule, table: 'change_request', operation: 'delete', sys_mod_count: null };
    expect(parseDelivery(delivery(deleted))).toMatchObject({ table: 'change_request', operation: 'delete' });
    expect(deliveryIdOf(delivery(rule))).toBe('a1b2');
    expect(deliveryIdOf(delivery(rule, { [DELIVERY_HEADER]: ' ' }))).toBeUndefined();
  });

  it('throws a ServiceNowDeliveryError on a body that is not the rules’, saying what is wrong', () => {
    expect(() => parseDelivery(delivery('not json'))).toThrow('The push delivery is not JSON');
    expect(() => parseDelivery(delivery({ ...rule, sys_id: 'CHG0030001' }))).toThrow(
      /sys_id is not a sys_id/,
    );
    expect(() => parseDelivery(delivery({ ...rule, operation: 'merge' }))).toThrow(/operation/);
    expect(() => parseDelivery(delivery({ ...rule, table: '../sys_user' }))).toThrow(ServiceNowDeliveryError);
  });
});
