import { describe, expect, it } from 'vitest';
import { lastModifiedOf, schemaIdOf, tableTemplates, toSourceApproval, viewOf } from '../src/mapping.js';
import { APPROVAL_STATES, ApprovedRecord, ApproverRecord } from '../src/model.js';
import { fixture } from './support/fixtures.js';

// From approval records to the kit's approvals: the pieces the end-to-end tests see only as a whole.
const [approval] = (fixture('approvals-page.json').result as unknown[]).map((record) =>
  ApproverRecord.parse(record),
);
const [change] = (fixture('change-request.json').result as unknown[]).map((record) =>
  ApprovedRecord.parse(record),
);
const INSTANCE = 'https://example.service-now.com/';

describe('toSourceApproval', () => {
  it('is one approval per approval record, for its approver, with the approved record as a person reads it', () => {
    expect(toSourceApproval(approval!, change, INSTANCE)).toEqual({
      id: 'b5a7e2c1d0f14a3b9c8d7e6f5a4b3c2d',
      schemaId: 'servicenow-change_request',
      approver: '46d44a23a9fe19810012d100cca80666',
      resolved: false,
      lastModified: new Date('2026-03-02T09:30:00.003Z'),
      data: {
        table: 'change_request',
        tableLabel: 'Change request',
        number: 'CHG0030002',
        title: 'Upgrade the mail servers',
        state: 'Requested',
        approverName: 'Beth Anglin',
        requestedOn: '2026-03-02 01:00:00',
        dueDate: '2026-03-03 01:00:00',
        record: {
          number: 'CHG0030002',
          short_description: 'Upgrade the mail servers',
          type: 'Normal',
          risk: 'Moderate',
          impact: 'Medium',
          priority: 'High',
          category: 'Software',
          requested_by: 'Beth Anglin',
          start_date: '2026-03-10 14:00:00',
          end_date: '2026-03-10 16:00:00',
          state: 'Authorize',
          description: "Apply the vendor's upgrade.",
        },
        link: 'https://example.service-now.com/change_request.do?sys_id=c83c5e5347c12200e0ef563dbb9a7190',
      },
    });
  });

  it('waits only while the record is requested: every other documented state is resolved', () => {
    const resolved = APPROVAL_STATES.map((state) => [
      state,
      toSourceApproval({ ...approval!, state: { value: state, display: state } }, change, INSTANCE).resolved,
    ]);

    expect(resolved.filter(([, isResolved]) => !isResolved)).toEqual([['requested', false]]);
  });

  it('names the record by the approval alone when the integration user may not read it', () => {
    expect(toSourceApproval(approval!, undefined, INSTANCE).data).toMatchObject({
      number: 'CHG0030002',
      title: 'CHG0030002',
      record: null,
    });
  });
});

describe('lastModifiedOf', () => {
  it('is the later second of the two records, plus the sum of their sys_mod_count as milliseconds', () => {
    expect(lastModifiedOf(approval!, undefined)).toBe(Date.parse('2026-03-02T09:00:05Z'));
    expect(lastModifiedOf(approval!, change)).toBe(Date.parse('2026-03-02T09:30:00Z') + 3);
  });

  it('moves with each change of either record within one second, and with each later second', () => {
    const edited = { ...change!, sys_mod_count: { value: '4', display: '4' } };
    const later = { ...approval!, sys_updated_on: { value: '2026-03-02 09:30:01', display: '' } };

    expect(lastModifiedOf(approval!, edited)).toBeGreaterThan(lastModifiedOf(approval!, change));
    expect(lastModifiedOf(later, change)).toBeGreaterThan(lastModifiedOf(approval!, edited));
  });
});

describe('tableTemplates', () => {
  it('publishes a card and a detail per table, keyed as the mapping writes the data', () => {
    const [card, detail] = tableTemplates('sc_req_item');

    expect(card).toMatchObject({ type: 'card', schemaId: schemaIdOf('sc_req_item') });
    expect(detail!.template.fields).toEqual(
      expect.arrayContaining([
        { label: 'Item', path: 'record.cat_item' },
        { label: 'In ServiceNow', path: 'link' },
      ]),
    );
    expect(viewOf('sn_hr_core_case').label).toBe('Record');
  });
});
