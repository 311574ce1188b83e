/**
 * Deliveries of the push path: what the business rule on `sysapproval_approver` (after insert and update, in the
 * README) posts to the worker when an approval record changes, and the pure functions that read one. A delivery is a
 * hint, never the state: it names the approval that changed, and the kit reads that approval again through the
 * connector's `lookup()`.
 *
 * The rule posts a JSON body (`{"table": "sysapproval_approver", "sys_id": …, "operation": "update", …}`), signed
 * with HMAC-SHA256 over the body's bytes with a secret the instance and the worker share
 * (`X-Approval-Signature: sha256=<base64>`), and a delivery id of its own (`X-Approval-Delivery`), the same on every
 * retry of one callout.
 * @module
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { SYS_ID } from './model.js';

/** The header that carries the body's signature: `sha256=` and the HMAC-SHA256 in base64. */
export const SIGNATURE_HEADER = 'x-approval-signature';
/** The header that carries the delivery's id: a GUID the rule drew (`gs.generateGUID()`). */
export const DELIVERY_HEADER = 'x-approval-delivery';

/** A delivery as the worker receives it: the raw body, and the headers by their lower-case names. */
export interface PushDelivery {
  body: Buffer;
  headers: Readonly<Record<string, string | undefined>>;
}

/** The body the business rule posts. Fields not read here are allowed, so that a rule can add its own. */
export const DeliveryBody = z.object({
  table: z.string(),
  sys_id: z.string().regex(SYS_ID, 'is not a sys_id'),
  operation: z.enum(['insert', 'update', 'delete']),
  state: z.string().optional(),
  source_table: z.string().optional(),
  sys_updated_on: z.string().optional(),
});
export type DeliveryBody = z.output<typeof DeliveryBody>;

/**
 * The signature the business rule writes for `body`: HMAC-SHA256 keyed with the secret's UTF-8 bytes, in base64,
 * after `sha256=` (what `GlideCertificateEncryption.generateMac` gives for the secret in base64).
 */
export function signBody(body: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('base64')}`;
}

/**
 * Whether the delivery carries the signature of its raw body under `secret`: checked before the body is parsed, in
 * time that does not depend on where a forged signature differs. A missing or malformed header is `false`.
 */
export function verifyDelivery(delivery: PushDelivery, secret: string): boolean {
  if (typeof secret !== 'string' || secret === '')
    throw new TypeError('the push secret must be a non-empty string');
  const given = delivery.headers[SIGNATURE_HEADER];
  if (typeof given !== 'string') return false;
  const expected = Buffer.from(signBody(delivery.body, secret));
  const actual = Buffer.from(given.trim());
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * The approvals a verified delivery concerns: the approval record it names, or none when it names a record of
 * another table. Throws on a body that is not the rule's (not JSON, no sys_id, …): the kit counts it and drops it.
 */
export function deliveryApprovalIds(delivery: PushDelivery): string[] {
  let json: unknown;
  try {
    json = JSON.parse(delivery.body.toString('utf8'));
  } catch {
    throw new TypeError('the delivery is not JSON');
  }
  const parsed = DeliveryBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TypeError(
      `the delivery is not the business rule's: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`,
    );
  }
  return parsed.data.table === 'sysapproval_approver' ? [parsed.data.sys_id] : [];
}

/** The delivery's own id, for the kit to drop a retry of one callout; `undefined` when it carries none. */
export function deliveryIdOf(delivery: PushDelivery): string | undefined {
  const id = delivery.headers[DELIVERY_HEADER]?.trim();
  return id === undefined || id === '' ? undefined : id;
}
