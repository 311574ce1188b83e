import { describe, expect, it } from 'vitest';
import {
  DELIVERY_HEADER,
  deliveryApprovalIds,
  deliveryIdOf,
  type PushDelivery,
  SIGNATURE_HEADER,
  signBody,
  verifyDelivery,
} from '../src/push.js';

// The push path's pure functions: a delivery of the business rule verified before it is read, and read.
const SECRET = 'push-secret-0042';
const SYS_ID = 'b5a7e2c1d0f14a3b9c8d7e6f5a4b3c2d';

function delivery(body: unknown, headers: Record<string, string | undefined> = {}): PushDelivery {
  const raw = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return {
    body: raw,
    headers: { [SIGNATURE_HEADER]: signBody(raw, SECRET), [DELIVERY_HEADER]: 'a1b2', ...headers },
  };
}

const rule = { table: 'sysapproval_approver', sys_id: SYS_ID, operation: 'update', state: 'approved' };

describe('verifyDelivery', () => {
  it('accepts the signature of the raw body under the shared secret, as GlideCertificateEncryption.generateMac writes it', () => {
    // HMAC-SHA256 of "{}" keyed "push-secret-0042", in base64: what generateMac(base64Encode(secret), 'HmacSHA256', '{}') gives.
    expect(signBody('{}', SECRET)).toBe('sha256=yBCR+Sl/8Oa7mWLAQ/mIFMsYKl+IqR/MdOK2H3vY5CI=');
    expect(verifyDelivery(delivery(rule), SECRET)).toBe(true);
  });

  it('refuses a forged or missing signature, another secret, and a body changed after signing', () => {
    const signed = delivery(rule);
    const tampered = { ...signed, body: Buffer.from(signed.body.toString().replace('approved', 'rejected')) };

    expect(verifyDelivery(tampered, SECRET)).toBe(false);
    expect(verifyDelivery(signed, 'another-secret')).toBe(false);
    expect(verifyDelivery(delivery(rule, { [SIGNATURE_HEADER]: undefined }), SECRET)).toBe(false);
    expect(verifyDelivery(delivery(rule, { [SIGNATURE_HEADER]: 'sha256=' }), SECRET)).toBe(false);
    expect(() => verifyDelivery(signed, '')).toThrow(/secret/);
  });
});

describe('deliveryApprovalIds and deliveryIdOf', () => {
  it('names the approval record a delivery is about, and its delivery id', () => {
    expect(deliveryApprovalIds(delivery(rule))).toEqual([SYS_ID]);
    expect(deliveryApprovalIds(delivery({ ...rule, table: 'change_request' }))).toEqual([]);
    expect(deliveryIdOf(delivery(rule))).toBe('a1b2');
    expect(deliveryIdOf(delivery(rule, { [DELIVERY_HEADER]: ' ' }))).toBeUndefined();
  });

  it('throws on a body that is not the rule’s, saying what is wrong', () => {
    expect(() => deliveryApprovalIds(delivery('not json'))).toThrow('the delivery is not JSON');
    expect(() => deliveryApprovalIds(delivery({ ...rule, sys_id: 'CHG0030001' }))).toThrow(
      /sys_id is not a sys_id/,
    );
    expect(() => deliveryApprovalIds(delivery({ ...rule, operation: 'merge' }))).toThrow(/operation/);
  });
});
