/**
 * The push path's business rule, as the simulated instance runs it: after an approval record is inserted or updated,
 * it posts the record's JSON to the configured URL, signed as the README's rule signs it (`X-Approval-Signature:
 * sha256=` and `GlideCertificateEncryption.generateMac` of the body, keyed with the base64 of the secret, in
 * base64), with a delivery id of its own (`X-Approval-Delivery`, `gs.generateGUID()`), asynchronously
 * (`RESTMessageV2.executeAsync()`): the update does not wait for it, and its failure changes nothing.
 *
 * As an outbound REST message can, it sends a callout twice (a retry of one callout: the same body and delivery
 * id), or not at all, when told to.
 * @module
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Row } from './instance.js';

/** Where the rule's REST message posts, and the secret it signs with (a `password2` system property). */
export interface PushTarget {
  url: string;
  secret: string;
}

/** One callout of the rule, as sent. */
export interface Delivery {
  /** Its `X-Approval-Delivery`. */
  id: string;
  /** The approval record it names. */
  sysId: string;
  operation: 'insert' | 'update';
  body: string;
  headers: Readonly<Record<string, string>>;
  /** The status the target answered, or the error that kept it from answering. */
  outcome: number | string;
}

/** How the callouts go wrong, when told to; see the simulator's switches. */
export interface CalloutBehaviour {
  /** Each callout is sent twice, as a retried outbound message is: the same body and delivery id. */
  duplicates: boolean;
  /** This many of the next callouts are not sent (the instance's outbound queue lost them). */
  drops: number;
}

/** The business rule's callouts; see the module's documentation. */
export class BusinessRuleCallout {
  target: PushTarget | undefined;
  readonly behaviour: CalloutBehaviour = { duplicates: false, drops: 0 };
  readonly #deliveries: Delivery[] = [];
  readonly #dropped: { sysId: string; operation: string }[] = [];
  readonly #inFlight = new Set<Promise<void>>();

  constructor(target: PushTarget | undefined) {
    this.target = target;
  }

  /** The rule, after an insert or update of an approval record. */
  fire(row: Readonly<Row>, operation: 'insert' | 'update'): void {
    const target = this.target;
    if (target === undefined) return;
    if (this.behaviour.drops > 0) {
      this.behaviour.drops -= 1;
      this.#dropped.push({ sysId: row.sys_id ?? '', operation });
      return;
    }
    // The body as the rule builds it: JSON.stringify of these fields' values, in this order.
    const body = JSON.stringify({
      table: 'sysapproval_approver',
      sys_id: row.sys_id,
      operation,
      state: row.state,
      source_table: row.source_table,
      document_id: row.document_id,
      sys_updated_on: row.sys_updated_on,
      sys_mod_count: row.sys_mod_count,
    });
    const id = randomBytes(16).toString('hex');
    // generateMac(GlideStringUtil.base64Encode(secret), 'HmacSHA256', body): the key is the secret's bytes.
    const key = Buffer.from(Buffer.from(target.secret, 'utf8').toString('base64'), 'base64');
    const headers = {
      'content-type': 'application/json',
      'x-approval-signature': `sha256=${createHmac('sha256', key).update(body, 'utf8').digest('base64')}`,
      'x-approval-delivery': id,
    };
    for (let copy = 0; copy < (this.behaviour.duplicates ? 2 : 1); copy += 1) {
      const delivery: Delivery = {
        id,
        sysId: row.sys_id ?? '',
        operation,
        body,
        headers,
        outcome: 'pending',
      };
      this.#deliveries.push(delivery);
      const sent = this.#send(target.url, delivery).finally(() => this.#inFlight.delete(sent));
      this.#inFlight.add(sent);
    }
  }

  /** Every callout sent, duplicates included, oldest first. */
  deliveries(): readonly Delivery[] {
    return [...this.#deliveries];
  }

  /** The callouts dropped, oldest first. */
  dropped(): readonly { sysId: string; operation: string }[] {
    return [...this.#dropped];
  }

  /** Resolves once every callout sent so far has its answer (or its failure). */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  async #send(url: string, delivery: Delivery): Promise<void> {
    try {
      const answer = await fetch(url, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
        signal: AbortSignal.timeout(10_000),
      });
      await answer.arrayBuffer();
      delivery.outcome = answer.status;
    } catch (error) {
      delivery.outcome = String((error as Error).cause ?? error);
    }
  }
}
