/**
 * What the example's end-to-end tests share: a simulated instance on a clock of the test's own, the reference
 * backend in-process (the kit's test harness), the connector reading the one into the other, and what each holds.
 */
import { ManagementClient } from 'approval-connector-kit/client';
import { createTestHarness, type TestHarness } from 'approval-connector-kit/testing';
import { afterEach, beforeEach } from 'vitest';
import { ServiceNowSimulator, type ServiceNowSimulatorOptions } from '../../simulator/simulator.js';
import { ServiceNowClient } from '../../src/client.js';
import { ServiceNowConnector, type ServiceNowConnectorOptions } from '../../src/connector.js';

/** Where the tests' clock starts. */
export const START = Date.parse('2026-03-02T09:00:00.000Z');

/** A Management API client that counts its walks over the organization's users, which each mapping run makes. */
export class CountingManagementClient extends ManagementClient {
  userWalks = 0;

  override iterateUsers(...args: Parameters<ManagementClient['iterateUsers']>) {
    this.userWalks += 1;
    return super.iterateUsers(...args);
  }
}

/** The simulated instance, the harness and the clock of one test. */
export interface Stage {
  simulator: ServiceNowSimulator;
  harness: TestHarness;
  management: CountingManagementClient;
  /** Moves the instance's clock on. */
  tick(ms?: number): void;
  /** The connector, as a deployment builds it, reading the simulator as its integration user. */
  connector(options?: Partial<ServiceNowConnectorOptions>): ServiceNowConnector;
  /** The approval as the service holds it. */
  inService(id: string): ReturnType<TestHarness['approvals']>[number] | undefined;
  /** The approver's user name and password, as the console's sign-in form sends them. */
  credentialsOf(approverSysId: string): { username: string; password: string };
  /** The organization's users: the simulator's approvers, by the same emails. */
  addApproversAsUsers(): Promise<void>;
}

/** Starts a fresh stage before each test of the file, and stops it after; `options` start the simulator. */
export function useStage(options: ServiceNowSimulatorOptions = {}): () => Stage {
  let stage: Stage | undefined;
  beforeEach(async () => {
    // The instance's clock runs from START, as an instance's does, ten times as fast as the machine's: a read waits
    // for the second it read last to pass, and here one passes in a tenth of a second. tick() moves it on.
    const began = Date.now();
    let offset = 0;
    const now = () => START + (Date.now() - began) * 10 + offset;
    const simulator = await ServiceNowSimulator.start({ seed: 7, now, ...options });
    const harness = await createTestHarness();
    const management = new CountingManagementClient(
      harness.serviceOptions({ token: harness.tenant.managementToken }),
    );
    stage = {
      simulator,
      harness,
      management,
      tick: (ms = 1000) => {
        offset += ms;
      },
      connector: (overrides = {}) =>
        new ServiceNowConnector({
          client: new ServiceNowClient({ instanceUrl: simulator.url, ...simulator.integrationUser }),
          userMappings: { management, systemId: harness.tenant.system.id },
          ...overrides,
        }),
      inService: (id) => harness.approvals().find((approval) => approval.id === id),
      credentialsOf: (approverSysId) => {
        const approver = simulator.approvers.find(({ sysId }) => sysId === approverSysId);
        if (approver === undefined) throw new RangeError(`${approverSysId} is no approver of the simulator`);
        return { username: approver.username, password: approver.password };
      },
      addApproversAsUsers: async () => {
        await management.addUsers(
          harness.tenant.organization.id,
          simulator.approvers.map(({ email, name }) => {
            const [firstName = '', lastName = ''] = name.split(' ');
            return { email, firstName, lastName };
          }),
        );
      },
    };
  });
  afterEach(async () => {
    await stage?.harness.close();
    await stage?.management.close();
    await stage?.simulator.close();
    stage = undefined;
  });
  return () => {
    if (stage === undefined) throw new Error('no stage outside a test');
    return stage;
  };
}
