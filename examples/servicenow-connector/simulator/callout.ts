/**
 * The push path's business rules, as the simulated instance runs them (the README sets them up): after an approval
 * record is inserted, updated or deleted, and after an approved record (a change request, a requested item) is
 * updated, the rule posts the record's table, sys_id and operation to the configured URL, signed as the README's
 * rule signs it (`X-Approval-Signature: sha256=` and `GlideCertificateEncryption.generateMac` of the body, keyed
 * with the base64 of the secret, in base64), with a delivery id of its own (`X-Approval-Delivery`,
 * `gs.generateGUID()`), asynchronously (`RESTMessageV2.executeAsync()`): the change does not wait for it, and its
 * failure changes nothing. An outbound REST message is sent once: a callout that fails is lost.
 *
 * When told to, it sends each callout twice (the same body and delivery id, as a script that sends a message again
 * after a failure it could not tell from a lost answer does), or the next ones not at all.
 * @module
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { RecordOperation, Row } from './instance.js';

/** Where the rules' REST message posts, and the secret it signs with (a system property of the instance). */
export interface PushTarget {
  url: string;
  secret: string;
}

/**
 * The tables the rules run on, and after which operations: one rule on the approval records, and one on each
 * approved table.
 */
export const BUSINESS_RULES: Readonly<Record<string, readonly RecordOperation[]>> = {
  sysapproval_approver: ['insert', 'update', 'delete'],
  change_request: ['update'],
  sc_req_item: ['update'],
};

/** One callout of a rule, as sent. */
export interface Delivery {
  /** Its `X-Approval-Delivery`. */
  id: string;
  /** The table of the record it names. */
  table: string;
  /** The record it names. */
  sysId: string;
  operation: RecordOperation;
  body: string;
  headers: Readonly<Record<string, string>>;
  /** The status the target answered, or the error that kept it from answering. */
  outcome: number | string;
}

/** How the callouts go wrong, when told to; see the simulator's switches. */
export interface CalloutBehaviour {
  /** Each callout is sent twice: the same body and delivery id. */
  duplicates: boolean;
  /** This many of the next callouts are not sent (the instance's outbound queue lost them). */
  drops: number;
}

/** The business rules' callouts; see the module's documentation. */
export class BusinessRuleCallout {
  target: PushTarget | undefined;
  readonly behaviour: CalloutBehaviour = { duplicates: false, drops: 0 };
  readonly #deliveries: Delivery[] = [];
  readonly #dropped: { table: string; sysId: string; operation: RecordOperation }[] = [];
  readonly #inFlight = new Set<Promise<void>>();

  constructor(target: PushTarget | undefined) {
    this.target = target;
  }

  /** The rules, after an insert, update or delete of a record of any table. */
  fire(table: string, row: Readonly<Row>, operation: RecordOperation): void {
    const target = this.target;
    if (target === undefined || BUSINESS_RULES[table]?.includes(operation) !== true) return;
    const sysId = row.sys_id ?? '';
    if (this.behaviour.drops > 0) {
      this.behaviour.drops -= 1;
      this.#dropped.push({ table, sysId, operation });
      return;
    }
    // The body as the rule builds it: JSON.stringify of these values, in this order (getValue of an empty field is
    // null).
    const body = JSON.stringify({
      table,
      sys_id: sysId,
      operation,
      sys_updated_on: row.sys_updated_on || null,
      sys_mod_count: row.sys_mod_count || null,
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
      const delivery: Delivery = { id, table, sysId, operation, body, headers, outcome: 'pending' };
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
  dropped(): readonly { table: string; sysId: string; operation: RecordOperation }[] {
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
