import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { classifyFailure } from 'approval-connector-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SapInboxClient } from '../src/client.js';
import { SapHttpError, SapInboxUnsettledError, SapResponseError } from '../src/errors.js';
import {
  basic,
  collection,
  fixture,
  MockSap,
  ORIGIN,
  SERVICE_PATH,
  SERVICE_URL,
  taskEntry,
} from './support/mock-sap.js';

const technicalUser = { username: 'APPROVAL_SYNC', password: 'sync-pass-1' };
const approver = { username: 'AMILLER', password: 'miller-pass-1' };
const ref = { origin: 'LOCAL_TGW', instanceId: '000001750567' };
const OPEN_FILTER = "Status eq 'READY' or Status eq 'RESERVED' or Status eq 'IN_PROGRESS'";
const signal = new AbortController().signal;

let sap: MockSap;
beforeEach(() => {
  sap = new MockSap();
});
afterEach(() => {
  sap.done();
});

function client(options: { pageSize?: number; timeoutMs?: number } = {}): SapInboxClient {
  return new SapInboxClient({ serviceUrl: SERVICE_URL, ...options });
}

function taskQuery(skip: number, top: number, filter = OPEN_FILTER): Record<string, string> {
  return {
    $filter: filter,
    $expand: 'PotentialOwners,CustomAttributeData',
    $orderby: 'CreatedOn asc,InstanceID asc',
    $skip: String(skip),
    $top: String(top),
  };
}

function answerOptions(times = 1): void {
  for (let index = 0; index < times; index += 1) {
    sap.on({ resource: 'DecisionOptions' }, { body: fixture('decision-options.json') });
  }
}

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

describe('reading the open tasks', () => {
  it('asks for the open tasks with their owners and attributes, as the technical user, and reads d.results', async () => {
    sap.on(
      { resource: 'TaskCollection', query: taskQuery(0, 100) },
      { body: fixture('task-collection.json') },
    );
    for (const instanceId of ['000001750567', '000001750568']) {
      sap.on(
        { resource: 'DecisionOptions', query: { SAP__Origin: "'LOCAL_TGW'", InstanceID: `'${instanceId}'` } },
        { body: fixture('decision-options.json') },
      );
    }
    // A page shorter than $top is not the end: the next one, empty but for the last task read, is.
    const [, last] = JSON.parse(fixture('task-collection.json')).d.results;
    sap.on({ resource: 'TaskCollection', query: taskQuery(1, 101) }, { body: collection([last]) });

    const open = await all(client().openTasks({ credentials: technicalUser, signal }));

    expect(open.map(({ task }) => [task.InstanceID, task.Status, task.Processor])).toEqual([
      ['000001750567', 'READY', undefined],
      ['000001750568', 'RESERVED', 'BCHEN'],
    ]);
    const [first] = open;
    expect(first?.task).toMatchObject({
      SAP__Origin: 'LOCAL_TGW',
      TaskDefinitionID: 'TS00008267',
      TaskTitle: 'Release purchase requisition 10004711',
      Priority: 'HIGH',
      CreatedOn: new Date('2026-01-05T08:00:00.000Z'),
      CreatedByName: 'Eva Weber',
      CompletionDeadLine: new Date('2026-01-12T08:00:00.000Z'),
    });
    expect(first?.task.PotentialOwners.results.map((user) => user.UniqueName)).toEqual(['AMILLER', 'BCHEN']);
    expect(first?.task.CustomAttributeData.results).toContainEqual({
      Name: 'TOTAL_VALUE',
      Value: '12500.00',
    });
    expect(first?.decisionOptions).toEqual([
      { DecisionKey: '0001', DecisionText: 'Release', CommentMandatory: false, Nature: 'POSITIVE' },
      { DecisionKey: '0002', DecisionText: 'Reject', CommentMandatory: true, Nature: 'NEGATIVE' },
    ]);
    // Both tasks are of one task definition, and each has its decision options read: a task definition does not
    // fix them (SAP's generic decision task serves many workflow steps, each with decisions of its own).
    expect(sap.calls().map((call) => call.resource)).toEqual([
      'TaskCollection',
      'DecisionOptions',
      'DecisionOptions',
      'TaskCollection',
    ]);
    for (const call of sap.calls()) {
      expect(call.headers.authorization).toBe(basic('APPROVAL_SYNC', 'sync-pass-1'));
      expect(call.headers.accept).toBe('application/json');
    }
  });

  it('reads only the task definitions asked for', async () => {
    const filter = `(${OPEN_FILTER}) and (TaskDefinitionID eq 'TS00008267' or TaskDefinitionID eq 'TS20000166')`;
    sap.on({ resource: 'TaskCollection', query: taskQuery(0, 100, filter) }, { body: collection([]) });

    const open = await all(
      client().openTasks({
        credentials: technicalUser,
        signal,
        taskDefinitionIds: ['TS00008267', 'TS20000166'],
      }),
    );

    expect(open).toEqual([]);
    expect(sap.calls()).toHaveLength(1);
  });

  it('pages with $top and $skip, each later page starting at the last task of the page before', async () => {
    const [a, b, c, d] = ['000000000001', '000000000002', '000000000003', '000000000004'].map((id) =>
      taskEntry(id),
    );
    sap.on({ resource: 'TaskCollection', query: taskQuery(0, 2) }, { body: collection([a, b]) });
    sap.on({ resource: 'TaskCollection', query: taskQuery(1, 3) }, { body: collection([b, c, d]) });
    sap.on({ resource: 'TaskCollection', query: taskQuery(3, 3) }, { body: collection([d]) });
    answerOptions(4);

    const open = await all(client({ pageSize: 2 }).openTasks({ credentials: technicalUser, signal }));

    expect(open.map(({ task }) => task.InstanceID)).toEqual([
      '000000000001',
      '000000000002',
      '000000000003',
      '000000000004',
    ]);
  });

  it('skips no open task when one before the page boundary leaves the inbox between two pages', async () => {
    const [a, b, c, d, e] = [
      '000000000001',
      '000000000002',
      '000000000003',
      '000000000004',
      '000000000005',
    ].map((id) => taskEntry(id));
    sap.on({ resource: 'TaskCollection', query: taskQuery(0, 2) }, { body: collection([a, b]) });
    answerOptions(5);
    // A was decided after the first page: the rest moved up by one, and C now sits where B was.
    sap.on({ resource: 'TaskCollection', query: taskQuery(1, 3) }, { body: collection([c, d, e]) });
    sap.on({ resource: 'TaskCollection', query: taskQuery(0, 2) }, { body: collection([b, c]) });
    sap.on({ resource: 'TaskCollection', query: taskQuery(1, 3) }, { body: collection([c, d, e]) });
    sap.on({ resource: 'TaskCollection', query: taskQuery(3, 3) }, { body: collection([e]) });

    const open = await all(client({ pageSize: 2 }).openTasks({ credentials: technicalUser, signal }));

    // Every task open throughout the read is there, and none twice.
    expect(open.map(({ task }) => task.InstanceID)).toEqual([
      '000000000001',
      '000000000002',
      '000000000003',
      '000000000004',
      '000000000005',
    ]);
  });

  it('gives up with SapInboxUnsettledError when the inbox changes under each of 4 reads', async () => {
    const tasks = Array.from({ length: 12 }, (_, index) => taskEntry(String(index + 1).padStart(12, '0')));
    for (let read = 0; read < 4; read += 1) {
      sap.on(
        { resource: 'TaskCollection', query: taskQuery(0, 2) },
        { body: collection(tasks.slice(read, read + 2)) },
      );
      sap.on(
        { resource: 'TaskCollection', query: taskQuery(1, 3) },
        { body: collection(tasks.slice(read + 2, read + 5)) },
      );
    }
    answerOptions(5);

    const reading = all(client({ pageSize: 2 }).openTasks({ credentials: technicalUser, signal }));

    await expect(reading).rejects.toBeInstanceOf(SapInboxUnsettledError);
    await expect(reading).rejects.toMatchObject({ code: 'sap_inbox_unsettled' });
    expect(classifyFailure(await reading.catch((error: unknown) => error))).toMatchObject({
      status: 'internalError',
      meta: { code: 'sap_inbox_unsettled' },
    });
    expect(sap.calls().filter((call) => call.resource === 'TaskCollection')).toHaveLength(8);
  });

  it('follows d.__next to the end of a page SAP pages on its side, and reads on after a page shorter than $top', async () => {
    const [a, b, c, d] = ['000000000001', '000000000002', '000000000003', '000000000004'].map((id) =>
      taskEntry(id),
    );
    const next = `${SERVICE_URL}TaskCollection?$skiptoken=2`;
    sap.on(
      { resource: 'TaskCollection', query: taskQuery(0, 3) },
      { body: JSON.stringify({ d: { results: [a, b], __next: next } }) },
    );
    sap.on({ resource: 'TaskCollection', query: { $skiptoken: '2' } }, { body: collection([c]) });
    // The whole page was 3 tasks; the next is short (one task dropped, say) but not the last.
    sap.on({ resource: 'TaskCollection', query: taskQuery(2, 4) }, { body: collection([c, d]) });
    sap.on({ resource: 'TaskCollection', query: taskQuery(3, 4) }, { body: collection([d]) });
    answerOptions(4);

    const open = await all(client({ pageSize: 3 }).openTasks({ credentials: technicalUser, signal }));

    expect(open.map(({ task }) => task.InstanceID)).toEqual([
      '000000000001',
      '000000000002',
      '000000000003',
      '000000000004',
    ]);
  });

  it('refuses a d.__next that leads out of the service, sending the credentials nowhere else', async () => {
    sap.on(
      { resource: 'TaskCollection', query: taskQuery(0, 100) },
      {
        body: JSON.stringify({
          d: { results: [], __next: 'https://elsewhere.example.com/TaskCollection?$skiptoken=1' },
        }),
      },
    );

    const error = await all(client().openTasks({ credentials: technicalUser, signal })).catch(
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(SapResponseError);
    expect((error as Error).message).toContain('d.__next');
  });

  it('is classified internalError with its code when the answer is not understood', async () => {
    sap.on({ resource: 'TaskCollection' }, { body: JSON.stringify({ d: {} }) });

    const error = await all(client().openTasks({ credentials: technicalUser, signal })).catch(
      (caught: unknown) => caught,
    );

    expect(classifyFailure(error)).toMatchObject({
      status: 'internalError',
      meta: { code: 'sap_response_invalid' },
    });
  });

  it.each([
    ['no d.results array', JSON.stringify({ d: {} }), 'it has no d.results array'],
    [
      'a task without its key',
      collection([{ ...taskEntry('000000000001'), InstanceID: undefined }]),
      'InstanceID',
    ],
    [
      'a date that is not an OData date',
      collection([taskEntry('000000000001', { CreatedOn: '2026-01-05' })]),
      'CreatedOn is not an OData date',
    ],
    ['a body that is not JSON', '<html>Logon</html>', 'it is not JSON'],
  ])('refuses an answer with %s, naming what is wrong', async (_, body, problem) => {
    sap.on({ resource: 'TaskCollection' }, { body });

    const reading = all(client().openTasks({ credentials: technicalUser, signal }));

    await expect(reading).rejects.toBeInstanceOf(SapResponseError);
    await expect(reading).rejects.toThrow(problem);
  });
});

describe('reading one task', () => {
  it('reads the task by its key, as the user given, with its status and processor', async () => {
    sap.on(
      { resource: "TaskCollection(SAP__Origin='LOCAL_TGW',InstanceID='000001750567')", query: {} },
      { body: fixture('decision-result.json') },
    );

    const task = await client().task(ref, { credentials: approver, signal });

    expect(task).toMatchObject({ InstanceID: '000001750567', Status: 'COMPLETED', Processor: 'AMILLER' });
    expect(sap.calls()[0]?.headers.authorization).toBe(basic('AMILLER', 'miller-pass-1'));
  });

  it('writes each key as an OData string literal, a quote doubled and the rest percent-encoded', async () => {
    sap.on(
      { resource: "TaskCollection(SAP__Origin='O''B/1',InstanceID='A#1')" },
      { body: fixture('task.json') },
    );

    const task = await client().task(
      { origin: "O'B/1", instanceId: 'A#1' },
      { credentials: approver, signal },
    );

    expect(task.Status).toBe('READY');
    expect(task.Processor).toBeUndefined();
  });

  it("refuses an answer that is not one task, and passes SAP's 404 on as a SapHttpError", async () => {
    sap.on({ resource: "TaskCollection(SAP__Origin='LOCAL_TGW',InstanceID='000001750567')" }, { body: '{}' });
    sap.on(
      { resource: "TaskCollection(SAP__Origin='LOCAL_TGW',InstanceID='000001750567')" },
      { status: 404, body: fixture('odata-error-not-found.json') },
    );

    await expect(client().task(ref, { credentials: approver, signal })).rejects.toBeInstanceOf(
      SapResponseError,
    );
    await expect(client().task(ref, { credentials: approver, signal })).rejects.toMatchObject({
      status: 404,
      sapMessage: "Resource not found for segment 'Task'",
    });
  });
});

describe('taking a decision', () => {
  const session = {
    'x-csrf-token': 'Wbp7cgmHq0vKr9vXg3ZMNQ==',
    'set-cookie': [
      'SAP_SESSIONID_PRD_100=Zl3dnU0aE4WkQx9yRw8AAb6VjpKqEfGM%3d; path=/; secure; HttpOnly',
      'sap-usercontext=sap-client=100; path=/',
    ],
  };

  function answerFetch(headers: Record<string, string | string[]> = session): void {
    sap.on({ resource: '' }, { body: fixture('service-document.json'), headers });
  }

  it('fetches a CSRF token as the approver and sends it back with that session cookies to the Decision import', async () => {
    answerFetch();
    sap.on(
      {
        method: 'POST',
        resource: 'Decision',
        query: {
          SAP__Origin: "'LOCAL_TGW'",
          InstanceID: "'000001750567'",
          DecisionKey: "'0001'",
          Comments: "''",
        },
      },
      { body: fixture('decision-result.json') },
    );

    const task = await client().decide(
      ref,
      { decisionKey: '0001', comments: '' },
      { credentials: approver, signal },
    );

    expect(task).toMatchObject({ InstanceID: '000001750567', Status: 'COMPLETED', Processor: 'AMILLER' });
    const [fetch, post] = sap.calls();
    expect(fetch).toMatchObject({ method: 'GET', resource: '', query: {} });
    expect(fetch?.headers['x-csrf-token']).toBe('Fetch');
    expect(fetch?.headers.cookie).toBeUndefined();
    expect(fetch?.headers.authorization).toBe(basic('AMILLER', 'miller-pass-1'));
    expect(post?.headers['x-csrf-token']).toBe('Wbp7cgmHq0vKr9vXg3ZMNQ==');
    expect(post?.headers.cookie).toBe(
      'SAP_SESSIONID_PRD_100=Zl3dnU0aE4WkQx9yRw8AAb6VjpKqEfGM%3d; sap-usercontext=sap-client=100',
    );
    expect(post?.headers.authorization).toBe(basic('AMILLER', 'miller-pass-1'));
  });

  it('sends the comment as an OData string literal, a quote in it doubled', async () => {
    answerFetch();
    sap.on(
      {
        method: 'POST',
        resource: 'Decision',
        query: {
          SAP__Origin: "'LOCAL_TGW'",
          InstanceID: "'000001750567'",
          DecisionKey: "'0002'",
          Comments: "'Budget''s gone & so is Q3'",
        },
      },
      { body: fixture('decision-result.json') },
    );

    await client().decide(
      ref,
      { decisionKey: '0002', comments: "Budget's gone & so is Q3" },
      { credentials: approver, signal },
    );

    expect(sap.calls()).toHaveLength(2);
  });

  it('fetches a new token and tries once more when SAP answers 403 with x-csrf-token: Required', async () => {
    answerFetch();
    sap.on(
      { method: 'POST', resource: 'Decision' },
      {
        status: 403,
        body: fixture('csrf-required.txt'),
        headers: { 'x-csrf-token': 'Required', 'content-type': 'text/plain' },
      },
    );
    answerFetch({
      'x-csrf-token': 'second-token',
      'set-cookie': 'SAP_SESSIONID_PRD_100=second-session; path=/',
    });
    sap.on({ method: 'POST', resource: 'Decision' }, { body: fixture('decision-result.json') });

    const task = await client().decide(
      ref,
      { decisionKey: '0001', comments: '' },
      { credentials: approver, signal },
    );

    expect(task.Status).toBe('COMPLETED');
    const posts = sap.calls().filter((call) => call.method === 'POST');
    expect(posts.map((post) => [post.headers['x-csrf-token'], post.headers.cookie])).toEqual([
      [
        'Wbp7cgmHq0vKr9vXg3ZMNQ==',
        'SAP_SESSIONID_PRD_100=Zl3dnU0aE4WkQx9yRw8AAb6VjpKqEfGM%3d; sap-usercontext=sap-client=100',
      ],
      ['second-token', 'SAP_SESSIONID_PRD_100=second-session'],
    ]);
  });

  it('tries only once more: a second 403 Required is thrown as an authentication failure', async () => {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      answerFetch();
      sap.on(
        { method: 'POST', resource: 'Decision' },
        { status: 403, body: 'CSRF token validation failed', headers: { 'x-csrf-token': 'Required' } },
      );
    }

    const deciding = client().decide(
      ref,
      { decisionKey: '0001', comments: '' },
      { credentials: approver, signal },
    );

    await expect(deciding).rejects.toMatchObject({ name: 'SapHttpError', status: 403 });
    expect(classifyFailure(await deciding.catch((error: unknown) => error)).status).toBe(
      'authenticationError',
    );
    expect(sap.calls().filter((call) => call.method === 'POST')).toHaveLength(2);
  });

  it('does not try again after a 403 that is not about the CSRF token', async () => {
    answerFetch();
    sap.on(
      { method: 'POST', resource: 'Decision' },
      { status: 403, body: fixture('odata-error-not-found.json') },
    );

    const deciding = client().decide(
      ref,
      { decisionKey: '0001', comments: '' },
      { credentials: approver, signal },
    );

    await expect(deciding).rejects.toMatchObject({ status: 403 });
    expect(sap.calls()).toHaveLength(2);
  });

  it('keeps no credentials, token or cookie from one decision to the next', async () => {
    answerFetch();
    sap.on({ method: 'POST', resource: 'Decision' }, { body: fixture('decision-result.json') });
    answerFetch({
      'x-csrf-token': 'token-of-bchen',
      'set-cookie': 'SAP_SESSIONID_PRD_100=session-of-bchen; path=/',
    });
    sap.on({ method: 'POST', resource: 'Decision' }, { body: fixture('decision-result.json') });
    const sap1 = client();

    await sap1.decide(ref, { decisionKey: '0001', comments: '' }, { credentials: approver, signal });
    await sap1.decide(
      { origin: 'LOCAL_TGW', instanceId: '000001750568' },
      { decisionKey: '0001', comments: '' },
      { credentials: { username: 'BCHEN', password: 'chen-pass-1' }, signal },
    );

    const [, , fetch, post] = sap.calls();
    expect(fetch?.headers.cookie).toBeUndefined();
    expect(fetch?.headers.authorization).toBe(basic('BCHEN', 'chen-pass-1'));
    expect(post?.headers).toMatchObject({
      authorization: basic('BCHEN', 'chen-pass-1'),
      'x-csrf-token': 'token-of-bchen',
      cookie: 'SAP_SESSIONID_PRD_100=session-of-bchen',
    });
  });

  it('refuses an answer to the token fetch that carries no token', async () => {
    answerFetch({});

    const deciding = client().decide(
      ref,
      { decisionKey: '0001', comments: '' },
      { credentials: approver, signal },
    );

    await expect(deciding).rejects.toThrow('it carried no x-csrf-token header');
    expect(sap.calls()).toHaveLength(1);
  });
});

describe('bad input', () => {
  it.each([
    ['an empty user name', { ...approver, username: '' }, ref, '0001', '', /credentials\.username/],
    ['a user name with a colon', { ...approver, username: 'A:B' }, ref, '0001', '', /without ':'/],
    ['an empty password', { ...approver, password: '' }, ref, '0001', '', /credentials\.password/],
    ['no origin', approver, { ...ref, origin: '' }, '0001', '', /SAP__Origin/],
    ['no instance id', approver, { ...ref, instanceId: '' }, '0001', '', /InstanceID/],
    ['no decision key', approver, ref, '', '', /decisionKey/],
    ['no comments', approver, ref, '0001', undefined, /comments/],
  ])(
    'refuses %s before sending anything',
    async (_, credentials, taskRef, decisionKey, comments, message) => {
      const deciding = client().decide(
        taskRef,
        { decisionKey, comments: comments as string },
        { credentials, signal },
      );

      await expect(deciding).rejects.toThrow(message);
      expect(sap.calls()).toEqual([]);
    },
  );

  it('never shows the password it refuses', async () => {
    const deciding = client().decide(
      ref,
      { decisionKey: '0001', comments: '' },
      { credentials: { username: 'A:B', password: 'hunter2-secret' }, signal },
    );

    const error = await deciding.catch((caught: unknown) => caught);
    expect(inspect(error)).not.toContain('hunter2-secret');
  });

  it.each([
    [{ serviceUrl: 'ftp://sap.example.com/' }, /serviceUrl/],
    [{ serviceUrl: 'not a url' }, /serviceUrl/],
    [{ serviceUrl: 'https://user:pw@sap.example.com/' }, /without credentials/],
    [
      { serviceUrl: SERVICE_URL, pageSize: 0 },
      /`pageSize` to be an integer from 1 to 1000, got `0` \(number\)/,
    ],
    [{ serviceUrl: SERVICE_URL, timeoutMs: 1.5 }, /`timeoutMs`/],
    [{ serviceUrl: SERVICE_URL, sapClient: '1' }, /`sapClient` to be three digits/],
  ])('refuses the options %j, naming the option and the value', (options, message) => {
    expect(() => new SapInboxClient(options)).toThrow(message);
  });

  it('adds the final slash of the service root and the sap-client to every request', async () => {
    sap.on(
      {
        resource: 'DecisionOptions',
        query: { SAP__Origin: "'LOCAL_TGW'", InstanceID: "'000001750567'", 'sap-client': '100' },
      },
      { body: fixture('decision-options.json') },
    );
    const withClient = new SapInboxClient({
      serviceUrl: SERVICE_URL.slice(0, -1),
      sapClient: '100',
    });

    expect(await withClient.decisionOptions(ref, { credentials: technicalUser, signal })).toHaveLength(2);
  });
});

describe('failures, as the kit classifies them', () => {
  it.each([
    {
      status: 401,
      body: '<html><body>Logon failed</body></html>',
      headers: {
        'www-authenticate': 'Basic realm="SAP NetWeaver Application Server [PRD/100]"',
        'content-type': 'text/html',
      },
      classified: 'authenticationError',
    },
    {
      status: 403,
      body: fixture('odata-error-not-found.json'),
      headers: {},
      classified: 'authenticationError',
    },
    { status: 404, body: fixture('odata-error-not-found.json'), headers: {}, classified: 'systemError' },
    { status: 409, body: fixture('odata-error-completed.json'), headers: {}, classified: 'systemError' },
    { status: 400, body: fixture('odata-error-completed.json'), headers: {}, classified: 'systemError' },
    { status: 429, body: '', headers: { 'retry-after': '30' }, classified: 'serviceUnavailable' },
    { status: 500, body: fixture('odata-error-server.json'), headers: {}, classified: 'serviceUnavailable' },
    { status: 503, body: '', headers: { 'retry-after': '120' }, classified: 'serviceUnavailable' },
  ])(
    'a $status is a SapHttpError with its status, classified $classified',
    async ({ status, body, headers, classified }) => {
      sap.on({ resource: 'DecisionOptions' }, { status, body, headers: headers as Record<string, string> });

      const error = await client()
        .decisionOptions(ref, { credentials: approver, signal })
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(SapHttpError);
      expect(error).toMatchObject({ status });
      expect(classifyFailure(error).status).toBe(classified);
    },
  );

  it('carries Retry-After as retryAfterMs, in seconds or as an HTTP date', async () => {
    sap.on({ resource: 'DecisionOptions' }, { status: 429, headers: { 'retry-after': '30' } });
    sap.on(
      { resource: 'DecisionOptions' },
      { status: 503, headers: { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() } },
    );
    const sap1 = client();
    const read = () =>
      sap1.decisionOptions(ref, { credentials: approver, signal }).catch((error: unknown) => error);

    expect(await read()).toMatchObject({ status: 429, retryAfterMs: 30_000 });
    const later = (await read()) as SapHttpError;
    expect(later.retryAfterMs).toBeGreaterThan(3_500_000);
    expect(later.retryAfterMs).toBeLessThanOrEqual(3_600_000);
  });

  it("puts SAP's own message, written for the approver, in the error and so in the task result", async () => {
    answerDecisionFailure(400, fixture('odata-error-completed.json'));

    const error = await client()
      .decide(ref, { decisionKey: '0001', comments: '' }, { credentials: approver, signal })
      .catch((caught: unknown) => caught);

    expect(error).toMatchObject({
      status: 400,
      sapCode: 'SWF_RUN_WIM/123',
      sapMessage: 'Work item 000001750567 is already completed',
    });
    expect(classifyFailure(error)).toEqual({
      status: 'systemError',
      meta: {
        code: 'HTTP_400',
        message: 'SAP answered 400 to POST Decision: Work item 000001750567 is already completed',
      },
    });
  });

  it('never puts the password, the Authorization header, the CSRF token or the session cookie in an error', async () => {
    answerDecisionFailure(500, fixture('odata-error-server.json'));

    const error = await client()
      .decide(ref, { decisionKey: '0001', comments: '' }, { credentials: approver, signal })
      .catch((caught: unknown) => caught);

    const shown = [
      inspect(error, { depth: 10, showHidden: true }),
      JSON.stringify(error),
      String(error),
    ].join('\n');
    for (const secret of [
      'miller-pass-1',
      basic('AMILLER', 'miller-pass-1').slice('Basic '.length),
      'csrf-token-value-42',
      'session-cookie-value-42',
    ]) {
      expect(shown).not.toContain(secret);
    }
  });

  it("aborts with the caller's signal: at once when already aborted, and while waiting for SAP", async () => {
    const aborted = AbortSignal.abort(new Error('stopping'));
    await expect(client().decisionOptions(ref, { credentials: approver, signal: aborted })).rejects.toThrow(
      'stopping',
    );
    expect(sap.calls()).toEqual([]);

    const taken = sap.hold({ resource: 'DecisionOptions' });
    const controller = new AbortController();
    const reading = client().decisionOptions(ref, { credentials: approver, signal: controller.signal });
    await taken;
    controller.abort(new Error('worker stopping'));
    await expect(reading).rejects.toThrow('worker stopping');
  });

  it('gives up on a request that outlasts timeoutMs with a TimeoutError, classified serviceUnavailable', async () => {
    // However short the deadline, it may pass before the request is sent: either way the call outlasts it.
    void sap.hold({ resource: 'DecisionOptions' }, { optional: true });

    const error = await client({ timeoutMs: 20 })
      .decisionOptions(ref, { credentials: approver, signal })
      .catch((caught: unknown) => caught);

    expect(error).toMatchObject({ name: 'TimeoutError' });
    expect(classifyFailure(error).status).toBe('serviceUnavailable');
  });

  it("throws a refused connection as the socket's error with its code, not as fetch's bare TypeError", async () => {
    sap.allowLoopback();
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));

    const error = await new SapInboxClient({ serviceUrl: `http://127.0.0.1:${port}${SERVICE_PATH}` })
      .decisionOptions(ref, { credentials: approver, signal })
      .catch((caught: unknown) => caught);

    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(classifyFailure(error)).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'ECONNREFUSED' },
    });
  });

  it('throws a redirect to a logon page as the SapHttpError it is, without following it', async () => {
    sap.on(
      { resource: 'DecisionOptions' },
      { status: 302, headers: { location: `${ORIGIN}/sap/saml2/sp/logon?RelayState=inbox` } },
    );

    const error = await client()
      .decisionOptions(ref, { credentials: approver, signal })
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(SapHttpError);
    expect(error).toMatchObject({ status: 302 });
    expect(classifyFailure(error)).toMatchObject({ status: 'internalError', meta: { code: 'sap_http' } });
    expect(sap.calls().map((call) => call.resource)).toEqual(['DecisionOptions']);
  });

  function answerDecisionFailure(status: number, body: string): void {
    sap.on(
      { resource: '' },
      {
        body: fixture('service-document.json'),
        headers: {
          'x-csrf-token': 'csrf-token-value-42',
          'set-cookie': 'SAP_SESSIONID_PRD_100=session-cookie-value-42',
        },
      },
    );
    sap.on({ method: 'POST', resource: 'Decision' }, { status, body });
  }
});
