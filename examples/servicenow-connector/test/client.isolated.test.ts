import { classifyFailure } from 'approval-connector-kit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { nextLink, ServiceNowClient, type ServiceNowClientOptions } from '../src/client.js';
import { ServiceNowArgumentError, ServiceNowHttpError, ServiceNowResponseError } from '../src/errors.js';
import { APPROVER_FIELDS, ApprovedRecord, ApproverRecord } from '../src/model.js';
import { fixture } from './support/fixtures.js';
import { INSTANCE, mockInstance } from './support/mock-instance.js';

// The client against answers shaped as ServiceNow documents them (test/fixtures, with their pages), served by nock
// on the global fetch: what each call sends, how it pages, and how it fails.
const PASSWORD = 'sync-Pass-0042';
const APPROVALS = '/api/now/table/sysapproval_approver';
const SYS_ID = 'b5a7e2c1d0f14a3b9c8d7e6f5a4b3c2d';
let instance: ReturnType<typeof mockInstance>;

beforeEach(() => {
  instance = mockInstance();
});

afterEach(() => {
  instance.verify();
});

function client(options: Partial<ServiceNowClientOptions> = {}): ServiceNowClient {
  return new ServiceNowClient({
    instanceUrl: INSTANCE,
    username: 'approval.sync',
    password: PASSWORD,
    ...options,
  });
}

const query = { table: 'sysapproval_approver', query: 'state=requested', fields: APPROVER_FIELDS, limit: 2 };

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    () => expect.unreachable('it succeeded'),
    (error: unknown) => error,
  );
}

describe('ServiceNowClient: reading a table', () => {
  it('asks for a page with the documented parameters, as the integration user, and reads values and display values', async () => {
    instance.reply('GET', APPROVALS, 200, fixture('approvals-page.json'));

    const page = await client().page(query, ApproverRecord);

    const [sent] = instance.received;
    expect(Object.fromEntries(sent!.query)).toEqual({
      sysparm_query: 'state=requested',
      sysparm_fields: APPROVER_FIELDS.join(','),
      sysparm_limit: '2',
      sysparm_offset: '0',
      sysparm_exclude_reference_link: 'true',
      sysparm_display_value: 'all',
    });
    expect(sent!.headers).toMatchObject({
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(`approval.sync:${PASSWORD}`).toString('base64')}`,
    });
    expect(page.next).toBeUndefined();
    expect(page.records[0]).toMatchObject({
      sys_id: { value: SYS_ID },
      approver: { value: '46d44a23a9fe19810012d100cca80666', display: 'Beth Anglin' },
      state: { value: 'requested', display: 'Requested' },
      sys_updated_on: { value: '2026-03-02 09:00:05', display: '2026-03-02 01:00:05' },
    });
  });

  it("follows the Link header's next page to the end: past a short page and an empty one, not past the last", async () => {
    const next = (offset: number) =>
      `<${INSTANCE}${APPROVALS}?sysparm_query=state%3Drequested&sysparm_fields=sys_id,state&sysparm_limit=2&sysparm_offset=${offset}>;rel="next"`;
    const [first, second] = fixture('approvals-page.json').result as unknown[];
    instance.reply(
      'GET',
      APPROVALS,
      200,
      { result: [first] },
      { link: `${next(2)},<${INSTANCE}${APPROVALS}>;rel="last"` },
    );
    instance.reply('GET', APPROVALS, 200, { result: [] }, { link: next(4) });
    instance.reply(
      'GET',
      APPROVALS,
      200,
      { result: [second] },
      { link: `<${INSTANCE}${APPROVALS}>;rel="first"` },
    );

    const read = [];
    for await (const record of client().records(query, ApproverRecord)) read.push(record.sys_id.value);

    expect(read).toHaveLength(2);
    expect(instance.received.map(({ query }) => query.get('sysparm_offset'))).toEqual(['0', '2', '4']);
    // The instance's link is followed as written, asking for display values whatever it kept.
    expect(instance.received[1]!.query.get('sysparm_fields')).toBe('sys_id,state');
    expect(instance.received[1]!.query.get('sysparm_display_value')).toBe('all');
  });

  it('does not follow a Link that comes back, or one to another host', async () => {
    const loop = `<${INSTANCE}${APPROVALS}?sysparm_offset=2>;rel="next"`;
    instance.reply('GET', APPROVALS, 200, { result: [] }, { link: loop });
    instance.reply('GET', APPROVALS, 200, { result: [] }, { link: loop });

    const error = await failure(
      (async () => {
        for await (const _ of client().records(query, ApproverRecord)) {
          // read to the end
        }
      })(),
    );

    expect(error).toBeInstanceOf(ServiceNowResponseError);
    const elsewhere = new URL(INSTANCE);
    expect(
      nextLink(
        `<https://attacker.example${APPROVALS}?sysparm_offset=2>;rel="next"`,
        elsewhere,
        'sysapproval_approver',
      ),
    ).toBeUndefined();
    expect(
      nextLink(
        `<${INSTANCE}/api/now/table/sys_user?sysparm_offset=2>;rel="next"`,
        elsewhere,
        'sysapproval_approver',
      ),
    ).toBeUndefined();
    // As the documentation writes it, without the opening bracket, and with commas in the link's own query.
    expect(
      nextLink(
        `${INSTANCE}${APPROVALS}?sysparm_fields=sys_id,state&sysparm_offset=40>;rel="next",${INSTANCE}${APPROVALS}?sysparm_offset=0>;rel="first"`,
        elsewhere,
        'sysapproval_approver',
      )?.searchParams.get('sysparm_fields'),
    ).toBe('sys_id,state');
  });

  it('reads one record, and takes a 404 (deleted, or kept from the user by an ACL) for none', async () => {
    instance.reply('GET', `${APPROVALS}/${SYS_ID}`, 200, {
      result: (fixture('approvals-page.json').result as unknown[])[0],
    });
    instance.reply('GET', `${APPROVALS}/${SYS_ID}`, 404, {
      error: {
        message: 'No Record found',
        detail: "Record doesn't exist or ACL restricts the record retrieval",
      },
      status: 'failure',
    });

    const found = await client().get('sysapproval_approver', SYS_ID, APPROVER_FIELDS, ApproverRecord);
    const gone = await client().get('sysapproval_approver', SYS_ID, APPROVER_FIELDS, ApproverRecord);

    expect(found?.sys_id.value).toBe(SYS_ID);
    expect(gone).toBeUndefined();
    expect(instance.received[0]!.query.get('sysparm_exclude_reference_link')).toBe('true');
  });

  it('reads an approved record with the fields of its table, whatever they are', async () => {
    instance.reply('GET', '/api/now/table/change_request', 200, fixture('change-request.json'));

    const { records } = await client().page(
      {
        table: 'change_request',
        query: 'sys_idINc83c5e5347c12200e0ef563dbb9a7190',
        fields: ['sys_id', 'risk'],
        limit: 1,
      },
      ApprovedRecord,
    );

    expect(records[0]).toMatchObject({
      risk: { value: '2', display: 'Moderate' },
      sys_mod_count: { value: '3' },
    });
  });
});

describe('ServiceNowClient: updating a record', () => {
  it('sends a PATCH with the fields to set as JSON, as the documentation describes it', async () => {
    const approval = (fixture('approvals-page.json').result as Record<string, unknown>[])[0]!;
    instance.reply('PATCH', `${APPROVALS}/${SYS_ID}`, 200, {
      result: { ...approval, state: { display_value: 'Approved', value: 'approved' } },
    });

    const updated = await client()
      .withCredentials({ username: 'beth.anglin', password: 'beth-Pass-1' })
      .update(
        'sysapproval_approver',
        SYS_ID,
        { state: 'approved', comments: 'Fine' },
        APPROVER_FIELDS,
        ApproverRecord,
      );

    expect(updated.state.value).toBe('approved');
    const [sent] = instance.received;
    expect(sent).toMatchObject({
      method: 'PATCH',
      body: '{"state":"approved","comments":"Fine"}',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
    });
    expect(sent!.headers.authorization).toBe(
      `Basic ${Buffer.from('beth.anglin:beth-Pass-1').toString('base64')}`,
    );
    // PATCH documents no sysparm_exclude_reference_link.
    expect([...sent!.query.keys()].sort()).toEqual(['sysparm_display_value', 'sysparm_fields']);
  });
});

describe('ServiceNowClient: failures', () => {
  it('throws the status and what the instance said, which the kit classifies; no password in it', async () => {
    instance.reply('GET', APPROVALS, 401, fixture('error-not-authenticated.json'));
    instance.reply('PATCH', `${APPROVALS}/${SYS_ID}`, 403, {
      error: {
        message: 'Operation Failed',
        detail: 'ACL Exception Update Failed due to security constraints',
      },
      status: 'failure',
    });

    const refused = await failure(client().page(query, ApproverRecord));
    const forbidden = await failure(
      client().update('sysapproval_approver', SYS_ID, { state: 'approved' }, ['sys_id'], ApproverRecord),
    );

    expect(refused).toMatchObject({
      code: 'servicenow_http',
      status: 401,
      serviceNowMessage: 'User Not Authenticated',
      message: `GET ${APPROVALS} answered 401: User Not Authenticated: Required to provide Auth information`,
    });
    expect(classifyFailure(refused).status).toBe('authenticationError');
    expect(classifyFailure(forbidden)).toMatchObject({
      status: 'authenticationError',
      meta: { code: 'HTTP_403' },
    });
    expect(JSON.stringify([refused, forbidden, String(refused)])).not.toContain(PASSWORD);
  });

  it('does not follow a redirect (to a sign-in page): its status is the answer', async () => {
    instance.reply('GET', APPROVALS, 302, '', { location: `${INSTANCE}/login.do` });

    expect(await failure(client().page(query, ApproverRecord))).toMatchObject({ status: 302 });
    expect(instance.received).toHaveLength(1);
  });

  it('throws a success it cannot read as a response error, naming what was not understood', async () => {
    instance.reply('GET', APPROVALS, 200, '<html>maintenance</html>');
    instance.reply('GET', APPROVALS, 200, {
      result: [{ sys_id: { value: 'not-a-sys-id', display_value: '' } }],
    });

    const notJson = await failure(client().page(query, ApproverRecord));
    const notARecord = await failure(client().page(query, ApproverRecord));

    expect(notJson).toBeInstanceOf(ServiceNowResponseError);
    expect((notARecord as Error).message).toMatch(/result\[0\]\.sys_id is not a sys_id/);
    expect(classifyFailure(notARecord).status).toBe('internalError');
  });

  it('refuses bad arguments before sending anything, never repeating a password', async () => {
    expect(() => client({ instanceUrl: 'https://sync:secret@example.service-now.com' })).toThrow(
      /\[redacted\]@/,
    );
    expect(() => client({ password: '' })).toThrow(ServiceNowArgumentError);
    expect(() => client({ username: 'a:b' })).toThrow(/without ":"/);
    expect(() => client().withCredentials({ username: 'beth^ORactive=true', password: 'x' })).toThrow(/"\^"/);
    expect(() => client({ timeoutMs: 0 })).toThrow(/timeoutMs/);
    await expect(
      client().get('sysapproval_approver', '../sys_user', ['sys_id'], ApproverRecord),
    ).rejects.toThrow(/sys_id/);
    await expect(client().page({ ...query, table: 'Sys User' }, ApproverRecord)).rejects.toThrow(/table/);
    await expect(client().page({ ...query, fields: [] }, ApproverRecord)).rejects.toThrow(/fields/);
  });
});

describe('ServiceNowClient: a read waits out a rate limit', () => {
  const rateLimited = (retryAfter: string) => ({
    'retry-after': retryAfter,
    'x-ratelimit-limit': '100',
    'x-ratelimit-reset': '1772442000',
    'x-ratelimit-rule': '0b1a2c3d4e5f60718293a4b5c6d7e8f9',
  });

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  /** Runs the timers until `promise` settles; its value, or what it rejected with. */
  async function settled(promise: Promise<unknown>): Promise<unknown> {
    let outcome: { value: unknown } | undefined;
    void promise.then(
      (value) => {
        outcome = { value };
      },
      (error: unknown) => {
        outcome = { value: error };
      },
    );
    while (outcome === undefined) await vi.advanceTimersToNextTimerAsync();
    return outcome.value;
  }

  it('reads again after the Retry-After of a 429, and returns what it reads', async () => {
    instance.reply('GET', APPROVALS, 429, fixture('error-rate-limit.json'), rateLimited('3'));
    instance.reply('GET', APPROVALS, 200, fixture('approvals-page.json'));

    expect(await settled(client().page(query, ApproverRecord))).toMatchObject({ records: [{}, {}] });
    expect(instance.received).toHaveLength(2);
  });

  it('throws at once a wait that would pass rateLimitWaitMs, saying when to try again: serviceUnavailable', async () => {
    // ServiceNow's limits count requests per hour: the wait asked for can be long.
    instance.reply('GET', APPROVALS, 429, fixture('error-rate-limit.json'), rateLimited('1800'));

    const error = await settled(client().page(query, ApproverRecord));

    expect(error).toMatchObject({ status: 429, retryAfterMs: 1_800_000 });
    expect((error as Error).message).toMatch(
      /Rate limit exceeded: Rate limit of 100 requests .*; try again in 1800 s$/,
    );
    expect(classifyFailure(error)).toMatchObject({ status: 'serviceUnavailable', retryAfterMs: 1_800_000 });
  });

  it('throws the answer once rateLimitRetries reads were rate-limited too', async () => {
    for (let index = 0; index < 3; index += 1) {
      instance.reply('GET', APPROVALS, 429, fixture('error-rate-limit.json'), rateLimited('1'));
    }

    expect(await settled(client({ rateLimitRetries: 2 }).page(query, ApproverRecord))).toBeInstanceOf(
      ServiceNowHttpError,
    );
    expect(instance.received).toHaveLength(3);
  });

  it('stops waiting, with the reason, once the signal aborts: the worker stopping', async () => {
    instance.reply('GET', APPROVALS, 429, fixture('error-rate-limit.json'), rateLimited('20'));
    const stop = new AbortController();

    const read = client().page(query, ApproverRecord, { signal: stop.signal });
    const outcome = read.catch((error: unknown) => error);
    await vi.waitFor(() => expect(instance.received).toHaveLength(1));
    stop.abort(new Error('the worker is stopping'));

    expect(await outcome).toMatchObject({ message: 'the worker is stopping' });
    expect(instance.received).toHaveLength(1);
  });

  it('sends an update once: its 429 is thrown at once', async () => {
    instance.reply(
      'PATCH',
      `${APPROVALS}/${SYS_ID}`,
      429,
      fixture('error-rate-limit.json'),
      rateLimited('1'),
    );

    const error = await settled(
      client().update('sysapproval_approver', SYS_ID, { state: 'approved' }, ['sys_id'], ApproverRecord),
    );

    expect(error).toMatchObject({ status: 429, retryAfterMs: 1000 });
    expect(instance.received).toHaveLength(1);
  });
});
