/**
 * The conformance battery's driver of the simulated ServiceNow instance: it raises change requests for one approver
 * each, retitles them, approves them in ServiceNow itself and deletes their approval records, on a clock of its own
 * (or the battery's), makes the instance fail and answer short pages, and says what the Approval Service should
 * hold, computed from the instance's records (not through the connector's mapping, which is what the battery checks).
 *
 * `conformance` is the subject the battery takes: `conformanceSuite(conformance, { describe, it })` in
 * `conformance.test.ts`, or `connector verify test/servicenow-driver.ts` from the command line.
 * @module
 */
import type {
  ConformanceSubject,
  ExpectedApproval,
  FailureScope,
  NewSourceRequest,
  PushDriver,
  RestoreSource,
  SourceDriver,
  SourceFailure,
  SourceOperation,
} from 'approval-connector-kit/conformance';
import type { Fault, TableCall } from '../simulator/faults.js';
import { ServiceNowSimulator } from '../simulator/simulator.js';
import { APPROVAL_STATE_LABELS } from '../simulator/tables.js';
import { ServiceNowClient } from '../src/client.js';
import { ServiceNowConnector } from '../src/connector.js';

/** Where the driver's own clock starts: it runs from there, a second further at each change. */
const START = Date.parse('2026-03-02T09:00:00.000Z');
/**
 * How much faster than the machine's the instance's clock runs, from START or from where the battery sets it. The
 * connector's read waits for the instance's clock to leave the second it read last (src/approvals.ts): here that
 * second passes in a tenth of the machine's, as in the example's end-to-end tests (test/support/setup.ts).
 */
const CLOCK_SPEED = 10;
/** Records per page: small, so that the battery's ties cross pages. */
const PAGE_SIZE = 3;
/** How long a `slow` call takes when the battery does not say: longer than any task's deadline. */
const SLOW_MS = 60_000;

/**
 * The calls each of the battery's operations means: the lists of approval records are the sync's (by `sys_updated_on`
 * or by the records they approve), the list by sys_ids reconciliation's, the read of one approval record the
 * precheck's (after the read of the signed-in user) and its update the action's. The lists of approved records and
 * of users fail with `any` only.
 */
const CALLS: Readonly<Record<SourceOperation, readonly TableCall[]>> = {
  changes: ['approvalList'],
  lookup: ['approvalLookup'],
  precheck: ['approvalRead'],
  action: ['approvalUpdate'],
};

/** The fields of a change request the app shows, in the connector's order: the README's "What is read". */
const CHANGE_FIELDS = [
  'number',
  'short_description',
  'type',
  'risk',
  'impact',
  'priority',
  'category',
  'requested_by',
  'start_date',
  'end_date',
  'state',
  'description',
];

/**
 * How the instance shows each failure the driver provokes: a `503`; a `429` with `Retry-After: 0` (ServiceNow's says
 * in whole seconds how long to wait, and 0 keeps the battery from waiting out seconds at each read the client sends
 * again); a call cut; the sign-in refused (`401`: a password changed, a user locked out); an ACL's `403`; no answer;
 * an answer after the battery's delay.
 */
const FAULTS: Partial<Record<SourceFailure, (delayMs: number | undefined) => Fault>> = {
  unavailable: () => ({ status: 503 }),
  rateLimited: () => ({ status: 429, retryAfterSeconds: 0 }),
  unreachable: () => 'cut',
  unauthorized: () => 'unauthorized',
  forbidden: () => 'forbidden',
  hang: () => 'hang',
  slow: (delayMs) => ({ delayMs: delayMs ?? SLOW_MS }),
};

/**
 * Where the instance's clock is: the driver's own (from `own`, running), or the battery's once it sets one (from
 * where it stood then, `setAt` by the machine's clock). Either runs {@link CLOCK_SPEED} times as fast as the machine's.
 */
interface InstanceClock {
  own: number;
  battery: { now: () => number; setAt: number } | undefined;
}

/** Drives a simulated instance of its own; {@link close} stops it. */
export class ServiceNowDriver implements SourceDriver {
  readonly simulator: ServiceNowSimulator;
  /** Every failure the simulated instance can show a client, as an instance shows it. */
  readonly failures = Object.keys(FAULTS) as SourceFailure[];
  readonly pageSize = PAGE_SIZE;
  /**
   * The instance's business rules call out to the battery's address with its secret, as an administrator points
   * their REST message there: each insert, update and delete of an approval record, and each update of a change
   * request, one callout each.
   */
  readonly push: PushDriver = {
    deliverTo: (target) => this.simulator.setPushTarget(target),
    sent: () => this.simulator.callouts.settled(),
  };
  readonly approvers: readonly string[];
  /**
   * The instance's clock: the driver's own, a second further at each change, or the battery's once it sets one.
   * `sameInstant` holds it still through the instance's own `collisions` switch.
   */
  readonly #clock: InstanceClock;

  private constructor(simulator: ServiceNowSimulator, clock: InstanceClock) {
    this.simulator = simulator;
    this.approvers = simulator.approvers.map(({ sysId }) => sysId);
    this.#clock = clock;
  }

  /** A driver and its simulated instance, with no approvals yet. */
  static async start(): Promise<ServiceNowDriver> {
    // The driver's own clock runs from START, as an instance's does, and moves on a second more at each change.
    const began = Date.now();
    const clock: InstanceClock = { own: START, battery: undefined };
    const now = () => {
      const { battery } = clock;
      return battery === undefined
        ? clock.own + (Date.now() - began) * CLOCK_SPEED
        : Math.floor(battery.now() + (Date.now() - battery.setAt) * (CLOCK_SPEED - 1));
    };
    return new ServiceNowDriver(await ServiceNowSimulator.start({ requests: 0, now }), clock);
  }

  /** The connector as a deployment builds it, reading the instance as its integration user. */
  connector(): ServiceNowConnector {
    const { username, password } = this.simulator.integrationUser;
    return new ServiceNowConnector({
      client: new ServiceNowClient({ instanceUrl: this.simulator.url, username, password }),
      pageSize: PAGE_SIZE,
    });
  }

  /** A change request with one approval record: the approver's. */
  create({ approver, title }: NewSourceRequest): string {
    this.#tick();
    return this.simulator.raise({ table: 'change_request', title, approvers: [approver] }).approvals[0]!;
  }

  /** The change request's short description is edited; ServiceNow lets it be, decided or not. */
  change(id: string, { title }: { title: string }): void {
    const approval = this.#approval(id);
    if (approval === undefined) return;
    this.#tick();
    this.simulator.retitle('change_request', approval.document_id!, title);
  }

  /** The approver approves it in ServiceNow itself; an approval decided already stays as it is. */
  resolve(id: string): void {
    if (this.#approval(id)?.state !== 'requested') return;
    this.#tick();
    this.simulator.decideInServiceNow(id, 'approved');
  }

  /** The approval record is deleted. */
  delete(id: string): void {
    if (this.#approval(id) !== undefined) this.simulator.delete('sysapproval_approver', id);
  }

  async sameInstant<T>(changes: () => Promise<T>): Promise<T> {
    this.#tick();
    this.simulator.behaviour.collisions = true;
    try {
      return await changes();
    } finally {
      this.simulator.behaviour.collisions = false;
    }
  }

  /**
   * The instance's clock starts from `now()` and, as the driver's own, runs {@link CLOCK_SPEED} times as fast: behind
   * the machine's by a week, equal to it, or a week ahead, it stays there give or take the seconds of a check.
   */
  setClock(now: () => number): void {
    this.#clock.battery = { now, setAt: Date.now() };
  }

  /** Pages of two records, shorter than the connector's three, each with its `Link` to the next. */
  shortPages(enabled: boolean): void {
    this.simulator.behaviour.pageCap = enabled ? PAGE_SIZE - 1 : undefined;
  }

  /** One approval per approval record, with the change request as the integration user reads it. */
  holds(): ExpectedApproval[] {
    const names = new Map(this.simulator.approvers.map(({ sysId, name }) => [sysId, name]));
    const changes = new Map(this.simulator.records('change_request').map((row) => [row.sys_id!, row]));
    return this.simulator.records('sysapproval_approver').map((approval) => {
      const change = changes.get(approval.document_id!)!;
      const shown = this.simulator.displayValues('change_request', change.sys_id!)!;
      const stamp = [approval.sys_updated_on!, change.sys_updated_on!].sort().at(-1)!;
      const updates = Number(approval.sys_mod_count) + Number(change.sys_mod_count);
      return {
        id: approval.sys_id!,
        approver: approval.approver!,
        resolved: approval.state !== 'requested',
        schemaId: 'servicenow-change_request',
        lastModified: new Date(Date.parse(`${stamp.replace(' ', 'T')}Z`) + (updates % 1000)),
        data: {
          table: 'change_request',
          tableLabel: 'Change request',
          number: change.number,
          title: change.short_description,
          state: APPROVAL_STATE_LABELS[approval.state!],
          approverName: names.get(approval.approver!),
          requestedOn:
            this.simulator.displayValues('sysapproval_approver', approval.sys_id!)!.sys_created_on || null,
          dueDate: this.simulator.displayValues('sysapproval_approver', approval.sys_id!)!.due_date || null,
          record: Object.fromEntries(CHANGE_FIELDS.map((field) => [field, shown[field] ?? ''])),
          link: `${this.simulator.url}/change_request.do?sys_id=${change.sys_id}`,
        },
      };
    });
  }

  /** The decisions the instance received over the Table API on this approval. */
  actions(id: string): number {
    return this.simulator.decisions().filter(({ approval, via }) => approval === id && via === 'api').length;
  }

  /** The approver's user name and password: what they give the app's sign-in form. */
  credentials(approver: string): Record<string, string> {
    const found = this.simulator.approvers.find(({ sysId }) => sysId === approver);
    if (found === undefined) throw new RangeError(`${approver} is no approver of the simulated instance`);
    return { username: found.username, password: found.password };
  }

  /**
   * The instance fails the calls of `scope.operation` (see {@link CALLS}) the way {@link FAULTS} says. A port
   * refuses connections as a whole: `unreachable` is the port closed when every call fails until restored, and the
   * calls cut before any answer otherwise.
   */
  async fail(failure: SourceFailure, scope?: FailureScope): Promise<RestoreSource> {
    const { operation = 'any', times = 'until-restored', delayMs } = scope ?? {};
    const fault = FAULTS[failure];
    if (fault === undefined) throw new RangeError(`the simulated instance cannot fail as ${failure}`);
    if (failure === 'unreachable' && operation === 'any' && times === 'until-restored') {
      return await this.simulator.goOffline();
    }
    return this.simulator.disrupt(fault(delayMs), {
      ...(operation === 'any' ? {} : { calls: CALLS[operation] }),
      ...(times === 'until-restored' ? {} : { times }),
    });
  }

  close(): Promise<void> {
    return this.simulator.close();
  }

  /** The driver's own clock moves on a second before each change; the battery's moves by itself. */
  #tick(): void {
    if (this.#clock.battery === undefined) this.#clock.own += 1000;
  }

  #approval(id: string) {
    return this.simulator.records('sysapproval_approver').find(({ sys_id }) => sys_id === id);
  }
}

/** The subject of the conformance battery: a fresh simulated instance for each check, and the connector reading it. */
export const conformance: ConformanceSubject<ServiceNowDriver> = {
  name: 'ServiceNowConnector against the simulated ServiceNow instance',
  driver: () => ServiceNowDriver.start(),
  connector: (driver) => driver.connector(),
};
