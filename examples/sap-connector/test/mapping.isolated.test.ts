import { describe, expect, it } from 'vitest';
import { SapDecisionUnavailableError } from '../src/errors.js';
import {
  approvalId,
  chooseDecision,
  DECISION_TEXTS,
  decisionTypeOf,
  parseApprovalId,
  toSourceApprovals,
  unmappedTypes,
} from '../src/mapping.js';
import { DecisionOption, InboxTask, type OpenTask } from '../src/model.js';
import { fixtureJson } from './support/mock-sap.js';

// The documented answers, parsed as the client parses them.
const [readyTask, reservedTask] = fixtureJson('task-collection.json').d.results.map((entry: unknown) =>
  InboxTask.parse(entry),
) as [InboxTask, InboxTask];
const options = fixtureJson('decision-options.json').d.results.map((entry: unknown) =>
  DecisionOption.parse(entry),
) as DecisionOption[];

describe('toSourceApprovals', () => {
  it('gives one approval to each potential owner of a ready task, with what the app shows in data', () => {
    const approvals = toSourceApprovals({ task: readyTask, decisionOptions: options });

    expect(approvals.map(({ id, approver }) => [id, approver])).toEqual([
      ['LOCAL_TGW~000001750567~AMILLER', 'AMILLER'],
      ['LOCAL_TGW~000001750567~BCHEN', 'BCHEN'],
    ]);
    expect(approvals[0]).toEqual({
      id: 'LOCAL_TGW~000001750567~AMILLER',
      schemaId: 'sap-task',
      approver: 'AMILLER',
      resolved: false,
      data: {
        title: 'Release purchase requisition 10004711',
        taskName: 'Generic Decision Task',
        taskDefinitionId: 'TS00008267',
        priority: 'HIGH',
        status: 'READY',
        createdBy: 'Eva Weber',
        createdOn: '2026-01-05T08:00:00.000Z',
        dueOn: '2026-01-12T08:00:00.000Z',
        attributes: { PURCHASE_REQUISITION: '10004711', TOTAL_VALUE: '12500.00', CURRENCY: 'EUR' },
        decisions: [
          { key: '0001', text: 'Release', type: 'approve', commentMandatory: false },
          { key: '0002', text: 'Reject', type: 'reject', commentMandatory: true },
        ],
        sap: { origin: 'LOCAL_TGW', instanceId: '000001750567' },
      },
    });
    // No time of last change in the task collection: a snapshot compares contents instead.
    expect(approvals[0]).not.toHaveProperty('lastModified');
  });

  it('gives a reserved task to the user who reserved it only', () => {
    const approvals = toSourceApprovals({ task: reservedTask, decisionOptions: options });

    expect(approvals.map((approval) => approval.approver)).toEqual(['BCHEN']);
  });

  it('makes no approver of the users it is told to ignore, whatever their case', () => {
    const approvals = toSourceApprovals(
      { task: readyTask, decisionOptions: options },
      { ignoreUsers: ['bchen'] },
    );

    expect(approvals.map((approval) => approval.approver)).toEqual(['AMILLER']);
  });

  it('gives the approvals of a task none of whose options approves or rejects, with its options as they are', () => {
    const open: OpenTask = {
      task: readyTask,
      decisionOptions: [
        { DecisionKey: '0003', DecisionText: 'Inquire', CommentMandatory: false, Nature: undefined },
        { DecisionKey: '0004', DecisionText: 'Forward', CommentMandatory: true, Nature: undefined },
      ],
    };

    const approvals = toSourceApprovals(open);

    expect(approvals.map(({ approver }) => approver)).toEqual(['AMILLER', 'BCHEN']);
    expect(approvals[0]?.data).toMatchObject({
      decisions: [
        { key: '0003', text: 'Inquire', commentMandatory: false },
        { key: '0004', text: 'Forward', commentMandatory: true },
      ],
    });
    const { decisions } = approvals[0]!.data as { decisions: { type?: string }[] };
    expect(decisions.map(({ type }) => type)).toEqual([undefined, undefined]);
  });

  it('reads options without a Nature by the decision keys it is given, else by their text', () => {
    const natureless = [
      { DecisionKey: '0001', DecisionText: 'Genehmigen', CommentMandatory: false, Nature: undefined },
      { DecisionKey: '0002', DecisionText: 'Ablehnen', CommentMandatory: true, Nature: undefined },
    ];
    const byKeys = toSourceApprovals(
      { task: readyTask, decisionOptions: natureless },
      { decisionKeys: { approve: ['0002'], reject: ['0001'] } },
    );
    const byText = toSourceApprovals({ task: readyTask, decisionOptions: natureless });

    expect(byKeys[0]?.data).toMatchObject({
      decisions: [
        { key: '0001', type: 'reject' },
        { key: '0002', type: 'approve' },
      ],
    });
    expect(byText[0]?.data).toMatchObject({
      decisions: [
        { key: '0001', type: 'approve' },
        { key: '0002', type: 'reject' },
      ],
    });
  });

  it('uses the schema id it is given', () => {
    expect(
      toSourceApprovals({ task: readyTask, decisionOptions: options }, { schemaId: 'sap-pr' })[0]?.schemaId,
    ).toBe('sap-pr');
  });
});

describe('approval ids', () => {
  it.each([
    [{ origin: 'LOCAL_TGW', instanceId: '000001750567' }, 'AMILLER'],
    [{ origin: 'ORIGIN~WITH~TILDES', instanceId: '100%' }, 'user%7Ename~'],
    [
      { origin: 'bpm://origin', instanceId: 'bpm%3A%2F%2Fbpm.sap.com%2Ftask-instance%2F9851' },
      'a.b@example.com',
    ],
  ])('reads back the task and approver of %j / %s', (ref, approver) => {
    expect(parseApprovalId(approvalId(ref, approver))).toEqual({ ref, approver });
  });

  it.each(['', 'LOCAL_TGW~0001', 'a~b~c~d', 'a~~c', 'a~b%zz~c', 'a~b%41~c'])('refuses %j', (id) => {
    expect(() => parseApprovalId(id)).toThrow(TypeError);
  });
});

describe('chooseDecision', () => {
  it('takes the positive option for approve and the negative one for reject', () => {
    expect(chooseDecision(options, 'approve', '').DecisionKey).toBe('0001');
    expect(chooseDecision(options, 'reject', 'over budget').DecisionKey).toBe('0002');
  });

  it('refuses a decision that needs a comment when the comment is blank, saying so to the approver', () => {
    const choosing = () => chooseDecision(options, 'reject', '   ');

    expect(choosing).toThrow(SapDecisionUnavailableError);
    expect(choosing).toThrow('SAP requires a comment for the decision "Reject"; add one and try again');
    expect(() => chooseDecision(options, 'reject', '')).toThrow(
      expect.objectContaining({ reason: 'comment_required' }),
    );
  });

  it('refuses a task type no option maps to, asking to decide in SAP and naming what it offers', () => {
    const approveOnly = options.filter((option) => option.Nature === 'POSITIVE');

    expect(() => chooseDecision(approveOnly, 'reject', 'no')).toThrow(
      'decide this one in SAP: no option maps to reject (it offers Release)',
    );
    expect(() => chooseDecision([], 'approve', '')).toThrow(
      expect.objectContaining({ reason: 'not_offered' }),
    );
  });
});

describe('decisionTypeOf: what a decision option stands for', () => {
  const option = (DecisionKey: string, Nature?: string): DecisionOption => ({
    DecisionKey,
    DecisionText: DecisionKey,
    CommentMandatory: false,
    Nature,
  });
  const keys = { approve: ['0001', '0004'], reject: ['0002'] };

  it('goes by the Nature where SAP gives one, whatever the keys say', () => {
    expect(decisionTypeOf(option('0002', 'POSITIVE'), keys)).toBe('approve');
    expect(decisionTypeOf(option('0001', 'negative'), keys)).toBe('reject');
    expect(decisionTypeOf(option('0001', 'NEUTRAL'), keys)).toBeUndefined();
  });

  it('goes by the decision keys where the Nature is empty, and is undefined for any other key', () => {
    expect(decisionTypeOf(option('0004'), keys)).toBe('approve');
    expect(decisionTypeOf(option('0002'), keys)).toBe('reject');
    expect(decisionTypeOf(option('0003'), keys)).toBeUndefined();
    expect(decisionTypeOf(option('0001'))).toBeUndefined();
  });

  it.each<[text: string, type: string | undefined]>([
    ...DECISION_TEXTS.approve.map((text): [string, string] => [text, 'approve']),
    ...DECISION_TEXTS.reject.map((text): [string, string] => [text, 'reject']),
    ['  APPROVE ', 'approve'],
    ['Ablehnen', 'reject'],
    ['Approve with changes', undefined],
    ['Return for rework', undefined],
    ['Unapprove', undefined],
  ])('reads an option without a Nature or keys by its text: %j is %s', (text, type) => {
    expect(decisionTypeOf({ ...option('0009'), DecisionText: text })).toBe(type);
  });

  it("reads a task type by its text only where that type's decision keys are empty", () => {
    const approve = { ...option('0009'), DecisionText: 'Approve' };
    const reject = { ...option('0008'), DecisionText: 'Reject' };

    expect(decisionTypeOf(approve, { approve: ['0001'] })).toBeUndefined();
    expect(decisionTypeOf(reject, { approve: ['0001'] })).toBe('reject');
    expect(decisionTypeOf(approve, { reject: ['0002'] })).toBe('approve');
    expect(decisionTypeOf(approve, { approve: [] })).toBe('approve');
    expect(decisionTypeOf({ ...approve, Nature: 'NEGATIVE' })).toBe('reject');
    expect(decisionTypeOf({ ...option('0009'), DecisionText: undefined })).toBeUndefined();
  });

  it('says which task types no option maps to, and chooses by the keys', () => {
    const natureless = [option('0001'), option('0002'), option('0003')];

    expect(unmappedTypes(natureless)).toEqual(['approve', 'reject']);
    expect(unmappedTypes(natureless, { approve: ['0001'] })).toEqual(['reject']);
    expect(unmappedTypes(natureless, keys)).toEqual([]);
    expect(chooseDecision(natureless, 'reject', '', keys).DecisionKey).toBe('0002');
    expect(() => chooseDecision(natureless, 'approve', '')).toThrow(
      'decide this one in SAP: no option maps to approve (it offers 0001, 0002, 0003)',
    );
  });
});
