import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  endpoints,
  isSuccessStatus,
  isTask,
  SuccessStatus,
  Task,
  TaskResultStatus,
} from '../../src/api/index.js';
import { parseSourceApproval, SourceApprovalSchema } from '../../src/connector/source.js';
import { ValidationError } from '../../src/errors.js';

// The checks that stand in for a schema on the hot paths (each approval of a sync, each answer a worker reads) must
// never accept what the schema refuses, nor give anything else than the schema would.

const uuid = '0b7d5a52-7d43-4c61-9a4b-6f1f2f0e6c11';

/** Any value, plain or odd: what a source or a service could hand over in a field. */
const anyValue = fc.oneof(
  fc.anything(),
  fc.constantFrom(
    undefined,
    null,
    [],
    new Date(Number.NaN),
    new Date(0),
    Object.create(null),
    new (class {})(),
  ),
);

const objectish = fc.oneof(
  fc.dictionary(fc.string(), fc.jsonValue()),
  fc.constantFrom(Object.create(null) as object, [], new Date(0), new Map(), new (class {})()),
  anyValue,
);

describe('the check of each synced approval', () => {
  const deep = (levels: number) => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = i % 2 === 0 ? { v: value } : [value];
    return value as Record<string, unknown>;
  };
  const field = {
    id: fc.oneof(
      fc.string({ minLength: 1, maxLength: 40 }),
      fc.constantFrom('', '.', '..', 'a\uD800', '\uDC00', 'x'.repeat(255), 'x'.repeat(256), 'PO-1'),
      anyValue,
    ),
    text: fc.oneof(fc.string({ maxLength: 10 }), anyValue),
    resolved: fc.oneof(fc.boolean(), anyValue),
    lastModified: fc.oneof(
      fc.date({ noInvalidDate: false }),
      fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()),
      fc.constantFrom(
        '2026-05-01T10:00:00Z',
        '2026-05-01T10:00:00.123+02:00',
        '2026-05-01T10:00:00',
        '2026-05-01T10:00Z',
        '2026-13-01T10:00:00Z',
        '2026-05-01 10:00:00Z',
        '2026-05-01T10:00:00+24:00',
        undefined,
      ),
      anyValue,
    ),
    data: fc.oneof(
      objectish,
      fc.constantFrom(deep(63), deep(64), deep(65), JSON.parse('{"__proto__":{"a":1}}') as object),
    ),
  };
  const record = fc.oneof(
    fc.record(
      {
        id: field.id,
        schemaId: field.text,
        approver: field.text,
        resolved: field.resolved,
        lastModified: field.lastModified,
        data: field.data,
        extra: anyValue,
      },
      { requiredKeys: [] },
    ),
    anyValue,
  );

  it('gives what the schema gives, and refuses what it refuses with its issues', () => {
    fc.assert(
      fc.property(record, fc.boolean(), (value, requireLastModified) => {
        const parsed = SourceApprovalSchema.safeParse(value);
        let checked: unknown;
        try {
          checked = parseSourceApproval(value, requireLastModified);
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
          if (parsed.success) expect(parsed.data.lastModified).toBeUndefined();
          return;
        }
        expect(parsed.success).toBe(true);
        // Equal but for a `lastModified: undefined` the schema copies, which no JSON body carries.
        expect(checked).toEqual(parsed.data);
      }),
      { numRuns: 3000 },
    );
  });

  it('takes a record as a source gives it, lastModified a Date or an ISO string', () => {
    const base = { id: 'PO-1', schemaId: 'po', approver: 'ada', resolved: false, data: { a: [1, { b: 2 }] } };
    for (const lastModified of [new Date(Date.UTC(2026, 4, 1)), '2026-05-01T00:00:00.000Z']) {
      expect(parseSourceApproval({ ...base, lastModified, other: 1 }, true)).toStrictEqual({
        ...base,
        lastModified: '2026-05-01T00:00:00.000Z',
      });
    }
  });
});

describe('the checks of the answers a worker reads on every call', () => {
  const credentials = fc.oneof(
    fc.record(
      {
        algorithm: fc.oneof(fc.constant('x25519-xsalsa20-poly1305'), anyValue),
        publicKey: fc.oneof(fc.string(), anyValue),
        ephemeralPublicKey: fc.oneof(fc.string(), anyValue),
        nonce: fc.oneof(fc.string(), anyValue),
        ciphertext: fc.oneof(fc.string(), anyValue),
      },
      { requiredKeys: [] },
    ),
    anyValue,
  );
  const task = fc.oneof(
    fc.record(
      {
        id: fc.oneof(
          fc.uuid(),
          fc.constantFrom(uuid, uuid.toUpperCase(), `${uuid}0`, 'not-a-uuid'),
          anyValue,
        ),
        type: fc.oneof(fc.string(), anyValue),
        data: fc.oneof(
          fc.record(
            {
              approval: objectish,
              approveComments: fc.oneof(fc.string(), anyValue),
              credentials,
              extra: anyValue,
            },
            { requiredKeys: [] },
          ),
          anyValue,
        ),
        extra: anyValue,
      },
      { requiredKeys: [] },
    ),
    anyValue,
  );

  it('accepts a task only when the Task schema does, and as the schema would give it', () => {
    fc.assert(
      fc.property(task, (value) => {
        if (!isTask(value)) return;
        const parsed = Task.safeParse(value);
        expect(parsed.success).toBe(true);
        // The same fields and values; the schema's copy always has Object's prototype.
        expect(parsed.data).toEqual(value);
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts the tasks the service sends', () => {
    const sent = { id: uuid, type: 'approve', data: { approval: { id: 'PO-1' }, approveComments: 'ok' } };
    const sealed = {
      algorithm: 'x25519-xsalsa20-poly1305',
      publicKey: 'a',
      ephemeralPublicKey: 'b',
      nonce: 'c',
      ciphertext: 'd',
    };
    expect(isTask(sent)).toBe(true);
    expect(isTask({ ...sent, data: { ...sent.data, credentials: sealed } })).toBe(true);
  });

  it('accepts a write answer exactly when SuccessStatus does', () => {
    const answer = fc.oneof(
      fc.record({
        status: fc.oneof(fc.constantFrom('success', 'failure', 'Success'), anyValue),
        extra: anyValue,
      }),
      anyValue,
    );
    fc.assert(
      fc.property(answer, (value) => {
        expect(isSuccessStatus(value)).toBe(SuccessStatus.safeParse(value).success);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the check of the result a worker reports after every task', () => {
  const { acceptsInput, params: paramsSchema, body: bodySchema } = endpoints.reportTaskResult;
  const taskId = fc.oneof(
    fc.constantFrom(uuid, '', '.', '..', 'a/b', 'x'.repeat(300)),
    fc.string({ maxLength: 10 }),
    anyValue,
  );
  const status = fc.oneof(fc.constantFrom(...TaskResultStatus.options, 'Success', 'failure', ''), anyValue);
  const withGetter = {
    taskResult: Object.defineProperty({}, 'status', { get: () => 'success', enumerable: true }),
  };
  const params = fc.oneof(
    fc.record({ taskId, extra: anyValue }, { requiredKeys: [] }),
    fc.record({ taskId }),
    anyValue,
  );
  const body = fc.oneof(
    fc.record({
      taskResult: fc.oneof(
        fc.record(
          { status, meta: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), anyValue) },
          { requiredKeys: ['status'] },
        ),
        fc.record({ status }),
        anyValue,
      ),
    }),
    fc.record({ taskResult: fc.record({ status }), extra: anyValue }),
    fc.constant(withGetter),
    fc.constant(
      Object.assign(Object.create({ inherited: 1 }) as object, { taskResult: { status: 'success' } }),
    ),
    anyValue,
  );

  it('accepts an input only when both schemas do, and give it back unchanged, so that it is sent as it came', () => {
    let accepted = 0;
    fc.assert(
      fc.property(params, body, (p, b) => {
        if (!acceptsInput!(p, b)) return;
        accepted += 1;
        expect(paramsSchema!.parse(p)).toEqual(p);
        expect(bodySchema!.parse(b)).toEqual(b);
        expect(JSON.parse(JSON.stringify(b))).toEqual(b);
      }),
      { numRuns: 4000 },
    );
    // Not a check of nothing: the common input comes often enough.
    expect(accepted).toBeGreaterThan(10);
    expect(acceptsInput!({ taskId: uuid }, { taskResult: { status: 'systemError' } })).toBe(true);
    expect(acceptsInput!({ taskId: uuid }, withGetter)).toBe(false);
    expect(acceptsInput!({ taskId: uuid }, { taskResult: { status: 'success', meta: { code: 'x' } } })).toBe(
      false,
    );
  });
});
