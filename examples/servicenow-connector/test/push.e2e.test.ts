import { createHmac } from 'node:crypto';
import type { ConnectorWorker } from 'approval-connector-kit/worker';
import { describe, expect, it } from 'vitest';
import type { ServiceNowConnector } from '../src/connector.js';
import { useStage } from './support/setup.js';

// The push path end to end: the simulated instance's business rules call out, over HTTP, to the push ingress of a
// worker of the connector, which reads what they name and pushes it to the reference backend. Callouts come twice
// or are lost, as the switches say, and the service ends equal to the instance all the same: at once for what came,
// at the next sync run for what was lost.
const SECRET = 'servicenow-push-secret-0123';
const stage = useStage();

/**
 * A worker of the connector after a first sync run, with the instance's rules calling out to its push ingress;
 * `delayMs`, how long its queue of lookups gathers what the callouts name before one lookup reads it.
 */
async function startWorker({
  missedGraceMs = 60_000,
  delayMs = 200,
  tables = ['change_request', 'sc_req_item'],
} = {}): Promise<ConnectorWorker<ServiceNowConnector>> {
  const { harness, connector, simulator } = stage();
  const worker = await harness.start(connector({ tables }), {
    push: { secret: SECRET, missedGraceMs, delayMs },
  });
  await worker.syncNow();
  const url = worker.pushHealth?.url;
  if (url === undefined) throw new Error('the worker has no push ingress');
  simulator.setPushTarget({ url, secret: SECRET });
  return worker;
}

/** Every callout sent and answered, then every lookup they asked for done. */
async function delivered(worker: ConnectorWorker<ServiceNowConnector>): Promise<void> {
  await stage().simulator.callouts.settled();
  await worker.pushSettled();
}

/**
 * Where the service differs from the instance: an approval record missing or resolved otherwise, or showing another
 * title than its record's; an approval open in the service whose record is gone.
 */
function differences(): string[] {
  const { simulator, harness } = stage();
  const records = new Map(
    ['change_request', 'sc_req_item'].flatMap((table) =>
      simulator.records(table).map((row) => [row.sys_id!, row]),
    ),
  );
  const held = new Map(harness.approvals().map((approval) => [approval.id, approval]));
  const wrong: string[] = [];
  const approvals = simulator.records('sysapproval_approver');
  for (const approval of approvals) {
    const inService = held.get(approval.sys_id!);
    const resolved = approval.state !== 'requested';
    const title = records.get(approval.document_id!)?.short_description;
    if (inService?.resolved !== resolved || inService.data?.title !== title) {
      wrong.push(
        `${approval.sys_id}: ${inService === undefined ? 'missing' : `${inService.resolved} "${String(inService.data?.title)}"`}, instance ${resolved} "${title}"`,
      );
    }
  }
  const present = new Set(approvals.map(({ sys_id }) => sys_id));
  for (const [id, { resolved }] of held) {
    if (!present.has(id) && !resolved) wrong.push(`${id}: open, its record gone from the instance`);
  }
  return wrong;
}

/** The value of a metric of the worker, by name and labels. */
async function metric(
  worker: ConnectorWorker<ServiceNowConnector>,
  name: string,
  labels = '',
): Promise<number> {
  const { body } = await worker.metrics.render();
  const line = body.split('\n').find((text) => text.startsWith(`approval_connector_${name}${labels} `));
  return Number(line?.split(' ')[1]);
}

/** The runs the worker made of one mode (`incremental`, `lookup`, …), whatever their outcome. */
async function runs(worker: ConnectorWorker<ServiceNowConnector>, mode: string): Promise<number> {
  const { body } = await worker.metrics.render();
  return body
    .split('\n')
    .filter((line) => line.startsWith(`approval_connector_sync_runs_total{mode="${mode}",`))
    .reduce((sum, line) => sum + Number(line.split(' ')[1]), 0);
}

/** A change request waiting for its one approver's decision. */
function waitingChange() {
  const { simulator } = stage();
  return simulator.raise({
    table: 'change_request',
    title: 'Patch the VPN concentrators',
    approvers: [simulator.approvers[0]!.sysId],
  });
}

describe('the ServiceNow example, pushed to by the business rules', () => {
  it('shows a decision taken in ServiceNow itself at once, within one lookup and no sync run', async () => {
    const { simulator, inService } = stage();
    const raised = waitingChange();
    // Time enough for the change request's callout to be read before the lookup, however loaded the machine.
    const worker = await startWorker({ delayMs: 500 });
    const approval = raised.approvals[0]!;
    expect(inService(approval)?.resolved).toBe(false);
    const callsBefore = simulator.requests().length;
    const before = { sync: await runs(worker, 'incremental'), lookups: await runs(worker, 'lookup') };

    simulator.decideInServiceNow(approval, 'approved');
    await delivered(worker);

    expect(inService(approval)).toMatchObject({ resolved: true, data: { state: 'Approved' } });
    // The approval record's callout, and its change request's (approved by the workflow's rule): the change's
    // approvals read to name them, then one lookup of what both named.
    expect(simulator.callouts.deliveries().map(({ table, outcome }) => [table, outcome])).toEqual([
      ['sysapproval_approver', 202],
      ['change_request', 202],
    ]);
    const calls = simulator.requests().slice(callsBefore);
    expect(calls.filter(({ call }) => call === 'approvalLookup')).toHaveLength(1);
    expect(calls.map(({ call }) => call)).toEqual(['approvalList', 'approvalLookup', 'recordList']);
    expect(await runs(worker, 'incremental')).toBe(before.sync);
    expect(await runs(worker, 'lookup')).toBe(before.lookups + 1);
  });

  it('ends equal to the instance with every callout sent twice, before any sync run', async () => {
    const { simulator } = stage();
    const worker = await startWorker();
    simulator.callouts.behaviour.duplicates = true;

    const raised = waitingChange();
    simulator.advance(12);
    simulator.retitle('change_request', raised.sysId, 'Patch the VPN concentrators, both sites');
    const doomed = simulator.raise({ table: 'sc_req_item', approvers: [simulator.approvers[1]!.sysId] });
    simulator.delete('sc_req_item', doomed.sysId);
    await delivered(worker);

    expect(differences()).toEqual([]);
    // Each callout taken once (202), its copy answered as a duplicate (200), whichever came first.
    const byId = Map.groupBy(simulator.callouts.deliveries(), ({ id }) => id);
    expect(byId.size).toBeGreaterThan(10);
    for (const copies of byId.values()) {
      expect(copies.map(({ outcome }) => outcome).sort()).toEqual([200, 202]);
    }
    expect(await metric(worker, 'push_deliveries_total', '{outcome="duplicate"}')).toBe(byId.size);
  });

  it('ends equal to the instance with callouts lost, at the next sync run, which counts them missed', async () => {
    const { simulator } = stage();
    // Judged at once: no callout is in flight once they have settled.
    const worker = await startWorker({ missedGraceMs: 0 });
    simulator.callouts.behaviour.drops = 4;

    simulator.advance(12);
    await delivered(worker);
    expect(simulator.callouts.dropped()).toHaveLength(4);
    expect(differences()).not.toEqual([]);

    await worker.syncNow();

    expect(differences()).toEqual([]);
    expect(worker.pushHealth?.missed).toBeGreaterThan(0);
    expect(worker.pushHealth?.missed).toBeLessThanOrEqual(4);
    expect(await metric(worker, 'push_missed_total')).toBe(worker.pushHealth?.missed);
  });

  it('brings nothing of a table not synced: its callouts name no approval the lookup reads', async () => {
    const { simulator, harness } = stage();
    const worker = await startWorker({ tables: ['change_request'] });
    const before = harness.approvals().length;

    const item = simulator.raise({ table: 'sc_req_item', approvers: [simulator.approvers[0]!.sysId] });
    simulator.retitle('sc_req_item', item.sysId, 'Standing desk, two of them');
    const change = waitingChange();
    await delivered(worker);

    expect(simulator.callouts.deliveries().map(({ table }) => table)).toEqual([
      'sysapproval_approver',
      'sc_req_item',
      'sysapproval_approver',
    ]);
    expect(harness.approvals().map(({ id }) => id)).not.toContain(item.approvals[0]);
    expect(harness.approvals()).toHaveLength(before + 1);
    expect(stage().inService(change.approvals[0]!)?.resolved).toBe(false);
  });

  it('refuses a forged callout (401), which changes nothing and is counted', async () => {
    const { simulator, harness, inService } = stage();
    const raised = waitingChange();
    const worker = await startWorker();
    const approval = raised.approvals[0]!;
    // Decided in ServiceNow, and its callouts lost: only a genuine one would tell the worker.
    simulator.callouts.behaviour.drops = 2;
    simulator.decideInServiceNow(approval, 'approved');
    await delivered(worker);

    const body = JSON.stringify({ table: 'sysapproval_approver', sys_id: approval, operation: 'update' });
    const forged = `sha256=${createHmac('sha256', 'not-the-secret-4567').update(body).digest('base64')}`;
    const genuine = `sha256=${createHmac('sha256', SECRET).update(body).digest('base64')}`;
    const answers = [
      await harness.deliver(worker, { body, headers: { 'x-approval-signature': forged } }),
      await harness.deliver(worker, { body }),
      await harness.deliver(worker, { body: `${body} `, headers: { 'x-approval-signature': genuine } }),
    ];

    expect(answers).toEqual([401, 401, 401]);
    expect(inService(approval)?.resolved).toBe(false);
    expect(await metric(worker, 'push_deliveries_total', '{outcome="refused"}')).toBe(3);
  });
});
