/**
 * Deliveries of the push path: what the README's business rules post to the worker's push ingress when a record
 * changes (an approval record inserted, updated or deleted; an approved record, such as a change request, updated),
 * and the pure functions that read one. A delivery is a hint, never the state: it names the record that changed, and
 * the kit reads the approvals it concerns again through the connector's `lookup()`.
 *
 * Each rule posts the same JSON body (`{"table": "sysapproval_approver", "sys_id": …, "operation": "update",
 * "sys_updated_on": …, "sys_mod_count": …}`), signed with HMAC-SHA256 over the body's bytes with a secret the
 * instance and the worker share (`X-Approval-Signature: sha256=<base64>`), and a delivery id of its own
 * (`X-Approval-Delivery`).
 * @module
 */
import { createHmac } from 'node:crypto';
import { type PushDelivery, type Secret, verifyHmacSignature } from 'approval-connector-kit';
import { z } from 'zod';
import { ServiceNowDeliveryError } from './errors.js';
import { SYS_ID } from './model.js';

/** The header that carries the body's signature: `sha256=` and the HMAC-SHA256 in base64. */
export const SIGNATURE_HEADER = 'x-approval-signature';
/** The header that carries the delivery's id: a GUID the rule drew (`gs.generateGUID()`). */
export const DELIVERY_HEADER = 'x-approval-delivery';

/** The body the business rules post. Fields not read here are allowed, so that a rule can add its own. */
export const DeliveryBody = z.object({
  table: z.string().regex(/^[a-z][a-z0-9_]{0,79}$/, 'is not a table name'),
  sys_id: z.string().regex(SYS_ID, 'is not a sys_id'),
  operation: z.enum(['insert', 'update', 'delete']),
  sys_updated_on: z.string().nullish(),
  sys_mod_count: z.string().nullish(),
});
export type DeliveryBody = z.output<typeof DeliveryBody>;

/**
 * The signature a business rule writes for `body`: HMAC-SHA256 keyed with the secret's UTF-8 bytes, in base64,
 * after `sha256=` (what `GlideCertificateEncryption.generateMac` gives for the secret in base64).
 */
export function signBody(body: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('base64')}`;
}

/**
 * Whether the delivery carries the signature of its raw body under `secret`, with the kit's `verifyHmacSignature`:
 * checked before the body is parsed, in constant time. A missing or malformed header is `false`, and so is every
 * delivery without a secret: this connector takes no delivery it cannot verify.
 */
export function verifyDelivery(delivery: PushDelivery, secret: Secret | string | undefined): boolean {
  if (secret === undefined) return false;
  return verifyHmacSignature({
    secret,
    body: delivery.body,
    signature: delivery.headers[SIGNATURE_HEADER],
    encoding: 'base64',
    prefix: 'sha256=',
  });
}

/**
 * What a verified delivery tells: the table and sys_id of the record that changed, and how.
 * @throws {ServiceNowDeliveryError} on a body that is not the rules' (not JSON, no sys_id, …).
 */
export function parseDelivery(delivery: PushDelivery): DeliveryBody {
  let json: unknown;
  try {
    json = JSON.parse(delivery.body.toString('utf8'));
  } catch {
    throw new ServiceNowDeliveryError('is not JSON');
  }
  const parsed = DeliveryBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ServiceNowDeliveryError(
      `is not the business rules': ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`,
    );
  }
  return parsed.data;
}

/** The delivery's own id, for the kit to drop a second copy of one callout; `undefined` when it carries none. */
export function deliveryIdOf(delivery: PushDelivery): string | undefined {
  const id = delivery.headers[DELIVERY_HEADER]?.trim();
  return id === undefined || id === '' ? undefined : id;
}
