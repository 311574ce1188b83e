import type { SourceApproval } from 'approval-connector-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceNowSimulator } from '../simulator/simulator.js';
import { changedApprovals } from '../src/approvals.js';
import { ServiceNowClient } from '../src/client.js';

// The incremental read on its own, against the simulated instance on a clock of the test's.
const START = Date.parse('2026-03-02T09:00:00.200Z');
let now = START;
let simulator: ServiceNowSimulator;
let client: ServiceNowClient;
const reads = { tables: ['change_request', 'sc_req_item'], pageSize: 10 };

beforeEach(async () => {
  now = START;
  simulator = await ServiceNowSimulator.start({ seed: 3, now: () => now, requests: 0 });
  client = new ServiceNowClient({ instanceUrl: simulator.url, ...simulator.integrationUser });
});

afterEach(async () => {
  await simulator.close();
});

describe('changedApprovals', () => {
  // sync.crash of the conformance battery (seed 22361156): a record changed after the read, in the second the read
  // saw last, got a stamp below the cursor the run saved, which then claimed a change the service did not have.
  it('brings a change made later in the second it read last within the same read: the cursor was saved over it', async () => {
    const [nora, ravi, sofia] = simulator.approvers;
    now = START - 600_000;
    const change = simulator.raise({
      table: 'change_request',
      approvers: [nora!.sysId, ravi!.sysId, sofia!.sysId],
    });
    now = START;
    // One approval decided now: the change request, which waits for the others, does not change.
    simulator.decideInServiceNow(change.approvals[2]!, 'approved');
    const later = change.approvals[0]!;

    const read: SourceApproval[] = [];
    for await (const approval of changedApprovals(client, new Date(START - 1000), reads)) {
      read.push(approval);
      if (read.length === 1) {
        // Read, the instance's clock still in its second: another approval is decided in that very second, then
        // the clock moves on.
        simulator.decideInServiceNow(later, 'approved');
        now += 1500;
      }
    }

    expect(read.map(({ id }) => id)).toEqual([change.approvals[2], later]);
    expect(read[1]).toMatchObject({ resolved: true });
  });

  it('ends at once when the newest second read is behind the instance’s clock', async () => {
    simulator.raise({ table: 'sc_req_item', approvers: [simulator.approvers[2]!.sysId] });
    now += 2000;
    const calls = simulator.requests().length;

    for await (const _ of changedApprovals(client, new Date(START - 60_000), reads)) {
      // read to the end
    }

    // One pass: the approval records, then each approved table's changes and their approvals' records.
    expect(simulator.requests().length - calls).toBeLessThanOrEqual(6);
  });
});
