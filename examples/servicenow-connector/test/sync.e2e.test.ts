import { IntegrationClient, type UserMapping } from 'approval-connector-kit/client';
import { describe, expect, it } from 'vitest';
import { APPROVAL_STATE_LABELS } from '../simulator/tables.js';
import { CountingManagementClient, useStage } from './support/setup.js';

// The sync end to end: the simulated instance and the reference backend, each over HTTP, the connector between them.
const stage = useStage();

/** Every approval record of the instance, by sys_id, with the record it approves. */
function approvalRecords() {
  const { simulator } = stage();
  const documents = new Map(
    ['change_request', 'sc_req_item'].flatMap((table) =>
      simulator.records(table).map((row) => [row.sys_id!, row]),
    ),
  );
  return simulator.records('sysapproval_approver').map((approval) => ({
    approval,
    record: documents.get(approval.document_id!)!,
  }));
}

function sortedIds(): string[] {
  return stage()
    .harness.approvals()
    .map(({ id }) => id)
    .sort();
}

describe('the sync', () => {
  it('puts one approval per approval record into the service, with the record it approves, as a person reads it', async () => {
    const { harness, connector, simulator, inService } = stage();
    simulator.advance(6);
    const worker = await harness.start(connector());

    await worker.syncNow();

    const all = approvalRecords();
    expect(sortedIds()).toEqual(all.map(({ approval }) => approval.sys_id).sort());
    for (const { approval, record } of all) {
      const approver = simulator.approvers.find(({ sysId }) => sysId === approval.approver);
      expect(inService(approval.sys_id!)).toMatchObject({
        schemaId: `servicenow-${approval.source_table}`,
        approver: approval.approver,
        resolved: approval.state !== 'requested',
        lastModified: new Date(
          Date.parse(
            `${[approval.sys_updated_on!, record.sys_updated_on!].sort().at(-1)!.replace(' ', 'T')}Z`,
          ) +
            ((Number(approval.sys_mod_count) + Number(record.sys_mod_count)) % 1000),
        ).toISOString(),
        data: {
          table: approval.source_table,
          number: record.number,
          title: record.short_description,
          approverName: approver?.name,
          record: { number: record.number, short_description: record.short_description },
        },
      });
    }
    // Choices, references and date-times as a person reads them, in the integration user's time zone (GMT).
    const change = all.find(({ approval }) => approval.source_table === 'change_request')!;
    expect(inService(change.approval.sys_id!)?.data).toMatchObject({
      tableLabel: 'Change request',
      state: APPROVAL_STATE_LABELS[change.approval.state!],
      record: {
        type: expect.stringMatching(/^(Normal|Emergency)$/),
        risk: expect.stringMatching(/^(High|Moderate|Low)$/),
        requested_by: expect.stringMatching(/^(Lena Vogt|Marcus Hale)$/),
        start_date: change.record.start_date,
      },
      link: `${simulator.url}/change_request.do?sys_id=${change.record.sys_id}`,
    });
  });

  it('registers approve and reject with authRequired, and publishes a card and a detail per approved table', async () => {
    const { harness, connector } = stage();
    await harness.start(connector({ tables: ['change_request', 'sc_req_item', 'sn_hr_core_case'] }));

    expect(harness.backend.getConnector(harness.tenant.system.id)).toMatchObject({
      taskTypes: ['approve', 'reject'],
      authRequired: true,
    });
    const service = new IntegrationClient(harness.serviceOptions());
    try {
      const templates = await service.getUiTemplates();
      expect(
        templates.map(({ type, uiTemplate }) => `${type} ${Object.keys(uiTemplate).join(',')}`).sort(),
      ).toEqual(
        ['card', 'detail'].flatMap((type) =>
          ['change_request', 'sc_req_item', 'sn_hr_core_case'].map((table) => `${type} servicenow-${table}`),
        ),
      );
    } finally {
      await service.close();
    }
  });

  it('brings an edit of an approved record, which leaves its approval records alone, at the next run', async () => {
    const { harness, connector, simulator, tick, inService } = stage();
    const worker = await harness.start(connector());
    await worker.syncNow();
    const { approval, record } = approvalRecords().find(({ approval }) => approval.state === 'requested')!;
    const touched = approval.sys_updated_on;

    tick(60_000);
    simulator.retitle(approval.source_table!, record.sys_id!, 'Patch the VPN concentrators, both sites');
    await worker.syncNow();

    expect(
      simulator.records('sysapproval_approver').find(({ sys_id }) => sys_id === approval.sys_id),
    ).toMatchObject({
      sys_updated_on: touched,
    });
    expect(inService(approval.sys_id!)?.data).toMatchObject({
      title: 'Patch the VPN concentrators, both sites',
    });
  });

  it('brings two changes of one approval within one second, the second after the first was synced', async () => {
    const { harness, connector, simulator, inService } = stage();
    const worker = await harness.start(connector());
    // Both changes stamped with one second of sys_updated_on, however long the run between them takes.
    simulator.behaviour.collisions = true;
    const { sysId, table, approvals } = simulator.raise({ title: 'Rotate the TLS certificates' });
    await worker.syncNow();

    simulator.retitle(table, sysId, 'Rotate the TLS certificates of the web tier');
    simulator.behaviour.collisions = false;
    await worker.syncNow();

    expect(inService(approvals[0]!)?.data).toMatchObject({
      title: 'Rotate the TLS certificates of the web tier',
    });
  });

  it("maps the approvers to the organization's users by their sys_user email, each once", async () => {
    const { harness, connector, simulator, management, addApproversAsUsers } = stage();
    await addApproversAsUsers();
    const worker = await harness.start(connector());

    await worker.syncNow();
    await worker.syncNow();

    const mappings: UserMapping[] = [];
    for await (const mapping of management.iterateSystemUserMappings(harness.tenant.system.id))
      mappings.push(mapping);
    const approvers = new Set(simulator.records('sysapproval_approver').map(({ approver }) => approver));
    expect(mappings.map(({ systemUserId }) => systemUserId).sort()).toEqual([...approvers].sort());
    // Each run reads the approvers' users (their emails may change), and maps only what it has not mapped yet.
    expect(simulator.requests().filter(({ call }) => call === 'userList')).toHaveLength(2);
    expect(management.userWalks).toBe(1);
  });

  it('maps an approver whose email is no user of the organization at a later run, once the organization has them', async () => {
    const { harness, connector, simulator, management, addApproversAsUsers } = stage();
    const worker = await harness.start(connector());
    await worker.syncNow();
    const before = [];
    for await (const mapping of management.iterateSystemUserMappings(harness.tenant.system.id))
      before.push(mapping);

    await addApproversAsUsers();
    await worker.resync();

    const after = [];
    for await (const mapping of management.iterateSystemUserMappings(harness.tenant.system.id))
      after.push(mapping);
    expect(before).toEqual([]);
    expect(after.length).toBe(
      new Set(simulator.records('sysapproval_approver').map(({ approver }) => approver)).size,
    );
  });

  it('syncs the approvals all the same when the service refuses the user mappings', async () => {
    const { harness, connector, simulator, management } = stage();
    const refused = new CountingManagementClient(harness.serviceOptions({ token: 'not-a-management-token' }));
    try {
      const worker = await harness.start(
        connector({ userMappings: { management: refused, systemId: harness.tenant.system.id } }),
      );

      await expect(worker.syncNow()).resolves.toMatchObject({
        pushed: simulator.records('sysapproval_approver').length,
      });
      expect(management.userWalks).toBe(0);
    } finally {
      await refused.close();
    }
  });

  it('resolves at reconciliation an approval whose record was deleted, and one an ACL now hides', async () => {
    const { harness, connector, simulator, inService } = stage();
    const worker = await harness.start(connector());
    await worker.syncNow();
    const [deleted, hidden, kept] = simulator.waitingApprovals();

    simulator.delete('sysapproval_approver', deleted!.sys_id!);
    simulator.hide(hidden!.sys_id!);
    await worker.reconcileNow();

    expect(inService(deleted!.sys_id!)).toMatchObject({ resolved: true });
    expect(inService(hidden!.sys_id!)).toMatchObject({ resolved: true });
    expect(inService(kept!.sys_id!)).toMatchObject({ resolved: false });
  });
});

describe('the sync, as an instance pages and stamps', () => {
  it('reads past pages capped below sysparm_limit, and a short page of an ACL, to the end', async () => {
    const { harness, connector, simulator, inService } = stage();
    simulator.advance(20);
    simulator.behaviour.pageCap = 3;
    const [hidden] = simulator.waitingApprovals();
    simulator.hide(hidden!.sys_id!);
    const worker = await harness.start(connector({ pageSize: 5 }));

    await worker.syncNow();
    await worker.reconcileNow();

    const visible = approvalRecords().filter(({ approval }) => approval.sys_id !== hidden!.sys_id);
    expect(sortedIds()).toEqual(visible.map(({ approval }) => approval.sys_id).sort());
    for (const { approval } of visible) {
      expect(inService(approval.sys_id!)).toMatchObject({ resolved: approval.state !== 'requested' });
    }
  });

  it('reads every approval when more share one second of sys_updated_on than a page holds', async () => {
    const { harness, connector, simulator, tick } = stage();
    const worker = await harness.start(connector({ pageSize: 4 }));
    await worker.syncNow();

    simulator.behaviour.collisions = true;
    tick(60_000);
    for (let index = 0; index < 7; index += 1)
      simulator.raise({ table: 'change_request', approvers: [simulator.approvers[index % 4]!.sysId] });
    simulator.behaviour.collisions = false;
    tick(60_000);
    await worker.syncNow();

    expect(
      new Set(simulator.records('sysapproval_approver').map(({ sys_updated_on }) => sys_updated_on)).size,
    ).toBeLessThan(simulator.records('sysapproval_approver').length);
    expect(sortedIds()).toEqual(
      approvalRecords()
        .map(({ approval }) => approval.sys_id)
        .sort(),
    );
  });

  it('reads every approval when records change while a run pages through them', async () => {
    const { harness, connector, simulator, tick } = stage();
    simulator.advance(12);
    const worker = await harness.start(connector({ pageSize: 3 }));
    tick(60_000);
    simulator.behaviour.changesWhilePaging = 4;

    await worker.syncNow();

    expect(simulator.behaviour.changesWhilePaging).toBe(0);
    expect(sortedIds()).toEqual(
      approvalRecords()
        .map(({ approval }) => approval.sys_id)
        .sort(),
    );
  });
});

describe('the sync under a rate limit', () => {
  it('finishes a run under a rate limit smaller than one run, every approval arriving: a read waits out a 429', async () => {
    const { harness, connector, simulator, tick } = stage();
    simulator.advance(10);
    tick(60_000);
    // A bucket of 3 calls, refilled at 10 a second, under a run that reads a page of 4 approvals, then their records.
    simulator.behaviour.rateLimit = { capacity: 3, refillPerSecond: 10 };
    const worker = await harness.start(connector({ pageSize: 4 }), { sync: { sourceRetry: { retries: 0 } } });

    await worker.syncNow();

    expect(simulator.rateLimited).toBeGreaterThan(0);
    expect(sortedIds()).toEqual(
      approvalRecords()
        .map(({ approval }) => approval.sys_id)
        .sort(),
    );
  }, 15_000); // each 429 asks to wait whole seconds: a run that meets three waits three
});
