/**
 * The conformance battery's driver of the simulated SAP system: it creates, retitles, decides and withdraws tasks in
 * the simulator, makes the system fail and answer short pages, and says what the Approval Service should hold,
 * computed from the simulator's records (not through the connector's mapping, which is what the battery checks).
 * It has no `setClock`: the task collection has no time of last change, and the connector reads it whole.
 *
 * `conformance` is the subject the battery takes: `conformanceSuite(conformance, { describe, it })` in
 * `conformance.test.ts`, or `connector verify test/sap-driver.ts` from the command line.
 * @module
 */

import { Secret } from 'approval-connector-kit';
import type {
  ConformanceSubject,
  ExpectedApproval,
  FailureScope,
  NewSourceRequest,
  RestoreSource,
  SourceDriver,
  SourceFailure,
  SourceOperation,
} from 'approval-connector-kit/conformance';
import type { SimulatedTask } from '../simulator/inbox.js';
import { type SapCall, type SapDisruption, SapInboxSimulator } from '../simulator/simulator.js';
import { SapInboxClient } from '../src/client.js';
import { SapInboxConnector } from '../src/connector.js';

/** The task definition the driver creates tasks of: approve or reject, no comment required. */
const PURCHASE_ORDER = 'TS20000166';
/** Tasks per page of the task collection (the gateway's own paging): small, so that the battery crosses pages. */
const PAGE_SIZE = 3;
/** How long a `slow` request takes when the battery does not say: longer than any task's deadline. */
const SLOW_MS = 60_000;

/**
 * The requests each of the battery's operations means: the task collection is the sync's listing (every page of
 * it), the read of one task the pre-check's (the connector has no lookup; the two would read the same entity), and
 * the Decision function import the action. `DecisionOptions`, which the listing and the action both read, and the
 * CSRF token's fetch fail with `any` only; each operation still fails at its own request.
 */
const CALLS: Readonly<Record<SourceOperation, readonly SapCall[]>> = {
  changes: ['taskCollection'],
  lookup: ['task'],
  precheck: ['task'],
  action: ['decision'],
};
/** Drives a simulated SAP system of its own; {@link close} stops it. */
export class SapDriver implements SourceDriver {
  readonly simulator: SapInboxSimulator;
  /**
   * Every failure the simulated system can show a task's calls: the system behind the gateway down (`503`), the port
   * refusing connections, the password expired (`401`), the CSRF token refused (`403` to the decision), no answer
   * at all, and an answer late.
   */
  readonly failures: readonly SourceFailure[] = [
    'unavailable',
    'unreachable',
    'unauthorized',
    'forbidden',
    'hang',
    'slow',
  ];
  readonly pageSize = PAGE_SIZE;
  readonly approvers: readonly string[];
  /** The task of each approval the driver made. */
  readonly #instances = new Map<string, string>();

  private constructor(simulator: SapInboxSimulator) {
    this.simulator = simulator;
    this.approvers = simulator.approvers.map(({ username }) => username);
  }

  /** A driver and its simulated system, with an empty inbox. */
  static async start(): Promise<SapDriver> {
    const simulator = await SapInboxSimulator.start({ initialTasks: 0 });
    simulator.behaviour.serverPageSize = PAGE_SIZE;
    return new SapDriver(simulator);
  }

  /** The connector as a deployment would build it, reading the inbox as the simulator's technical user. */
  connector(): SapInboxConnector {
    const { username, password } = this.simulator.technicalUser;
    return new SapInboxConnector({
      client: new SapInboxClient({ serviceUrl: this.simulator.serviceUrl }),
      technicalUser: { username, password: new Secret(password) },
    });
  }

  /** A purchase order's approval task, with the approver its only potential owner. */
  create({ approver, title }: NewSourceRequest): string {
    const task = this.simulator.createTask({
      taskDefinitionId: PURCHASE_ORDER,
      title,
      potentialOwners: [approver],
    });
    const id = idOf(task, approver);
    this.#instances.set(id, task.instanceId);
    return id;
  }

  /** A decided task no longer changes in SAP: only an open one is retitled. */
  change(id: string, { title }: { title: string }): void {
    if (this.#isOpen(id)) this.simulator.retitleInSap(this.#instance(id), title);
  }

  /** The approver approves it in SAP itself: it leaves the inbox. A decided task stays as it is. */
  resolve(id: string): void {
    if (this.#isOpen(id)) this.simulator.decideInSap(this.#instance(id), '0001');
  }

  /** Its workflow is withdrawn: the task is gone. */
  delete(id: string): void {
    this.simulator.withdrawInSap(this.#instance(id));
  }

  /**
   * The simulated system's clock stands still between steps of its activity, which the driver never takes: every
   * change it makes shares one instant already (and the task collection shows none).
   */
  sameInstant<T>(changes: () => Promise<T>): Promise<T> {
    return changes();
  }

  /**
   * One approval per user who can decide each task: open while the task is in the inbox, with what My Inbox shows
   * of it; resolved, and no longer compared, once decided.
   */
  holds(): ExpectedApproval[] {
    return this.simulator.tasks().flatMap((task): ExpectedApproval[] => {
      if (task.status === 'COMPLETED') {
        return task.potentialOwners.map(({ username }) => ({
          id: idOf(task, username),
          approver: username,
          resolved: true,
          schemaId: 'sap-task',
        }));
      }
      const deciders =
        task.status === 'RESERVED' && task.processor !== undefined ? [task.processor] : task.potentialOwners;
      return deciders.map(({ username }) => ({
        id: idOf(task, username),
        approver: username,
        resolved: false,
        schemaId: 'sap-task',
        data: shown(task),
      }));
    });
  }

  /** The decisions taken on the task through the Decision function import. */
  actions(id: string): number {
    const instanceId = this.#instance(id);
    return this.simulator
      .decisions()
      .filter((decision) => decision.instanceId === instanceId && decision.via === 'odata').length;
  }

  /** The approver's SAP user and password, as the app's sign-in form sends them. */
  credentials(approver: string): Record<string, string> {
    const user = this.simulator.approvers.find(({ username }) => username === approver);
    if (user === undefined) throw new RangeError(`${approver} is no approver of the simulated system`);
    return { username: user.username, password: user.password };
  }

  /**
   * The system fails the requests of `scope.operation` (see {@link CALLS}) as SAP does. Unreachable is the port
   * refusing connections when every request fails until restored; a single request cannot be refused a
   * connection, so it is cut before any answer instead.
   */
  async fail(
    failure: SourceFailure,
    scope: FailureScope = { operation: 'any', times: 'until-restored' },
  ): Promise<RestoreSource> {
    const { operation, times, delayMs } = scope;
    if (failure === 'unreachable' && operation === 'any' && times === 'until-restored') {
      return this.simulator.goOffline();
    }
    const calls = operation === 'any' ? undefined : CALLS[operation];
    return this.simulator.disrupt(disruptionOf(failure, delayMs), {
      ...(calls === undefined ? {} : { calls }),
      ...(times === 'until-restored' ? {} : { times }),
    });
  }

  /**
   * Answers of the task collection shorter than they could be, with `d.__next` to the rest (OData's server-side
   * paging, which the system already does at 3 tasks an answer).
   */
  shortPages(enabled: boolean): void {
    this.simulator.behaviour.shortPages = enabled;
  }

  close(): Promise<void> {
    return this.simulator.close();
  }

  #isOpen(id: string): boolean {
    const instanceId = this.#instance(id);
    return this.simulator.openTasks().some((task) => task.instanceId === instanceId);
  }

  #instance(id: string): string {
    const instanceId = this.#instances.get(id);
    if (instanceId === undefined) throw new RangeError(`the driver made no task ${id}`);
    return instanceId;
  }
}

/** How the system shows each failure the driver provokes. */
function disruptionOf(failure: SourceFailure, delayMs: number | undefined): SapDisruption {
  switch (failure) {
    case 'unavailable':
    case 'unauthorized':
    case 'forbidden':
    case 'hang':
      return failure;
    case 'unreachable':
      return 'cut';
    case 'slow':
      return { delayMs: delayMs ?? SLOW_MS };
    default:
      throw new RangeError(`the simulated SAP system cannot fail as ${failure}`);
  }
}

/** `origin~instance~user`, each part with `%` and `~` percent-encoded. */
function idOf(task: SimulatedTask, username: string): string {
  return [task.origin, task.instanceId, username]
    .map((part) => part.replaceAll('%', '%25').replaceAll('~', '%7E'))
    .join('~');
}

/** What My Inbox shows of an open task: its title, definition, priority, status, people, dates and decisions. */
function shown(task: SimulatedTask): Record<string, unknown> {
  const natures = { POSITIVE: 'approve', NEGATIVE: 'reject' } as const;
  return {
    title: task.title,
    taskName: task.definition.name,
    taskDefinitionId: task.definition.id,
    priority: task.priority,
    status: task.status,
    createdBy: `${task.createdBy.firstName} ${task.createdBy.lastName}`,
    createdOn: task.createdOn.toISOString(),
    dueOn: task.dueOn?.toISOString() ?? null,
    attributes: Object.fromEntries(task.attributes),
    decisions: task.options.map((option) => ({
      key: option.key,
      text: option.text,
      ...(option.nature === '' ? {} : { type: natures[option.nature] }),
      commentMandatory: option.commentMandatory,
    })),
    sap: { origin: task.origin, instanceId: task.instanceId },
  };
}

/** The subject of the conformance battery: a fresh simulated system for each check, and the connector reading it. */
export const conformance: ConformanceSubject<SapDriver> = {
  name: 'SapInboxConnector against the simulated SAP system',
  driver: () => SapDriver.start(),
  connector: (driver) => driver.connector(),
};
