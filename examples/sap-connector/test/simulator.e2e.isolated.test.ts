import { classifyFailure } from 'approval-connector-kit';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatedEvent } from '../simulator/inbox.js';
import { SapInboxSimulator, type SapInboxSimulatorOptions } from '../simulator/simulator.js';
import { SapInboxClient } from '../src/client.js';
import { SapHttpError } from '../src/errors.js';
import { chooseDecision, decisionTypeOf, toSourceApprovals } from '../src/mapping.js';
import type { OpenTask, SapCredentials } from '../src/model.js';
import { fixtureJson } from './support/mock-sap.js';

const simulators: SapInboxSimulator[] = [];
afterEach(async () => {
  await Promise.all(simulators.splice(0).map((simulator) => simulator.close()));
});

async function simulator(options: SapInboxSimulatorOptions = {}): Promise<SapInboxSimulator> {
  const started = await SapInboxSimulator.start(options);
  simulators.push(started);
  return started;
}

const signal = new AbortController().signal;

async function openTasks(sap: SapInboxSimulator, pageSize = 5): Promise<OpenTask[]> {
  const client = new SapInboxClient({ serviceUrl: sap.serviceUrl, pageSize });
  const open: OpenTask[] = [];
  for await (const task of client.openTasks({ credentials: sap.technicalUser, signal })) open.push(task);
  return open;
}

function approverOf(sap: SapInboxSimulator, username: string): SapCredentials {
  const approver = sap.approvers.find((candidate) => candidate.username === username);
  if (approver === undefined) throw new Error(`No approver ${username}`);
  return { username: approver.username, password: approver.password };
}

/** An open task that is not reserved, with one of its potential owners. */
function readyTask(sap: SapInboxSimulator, definitionId?: string) {
  const task = sap
    .openTasks()
    .find(
      (candidate) =>
        candidate.status === 'READY' &&
        (definitionId === undefined || candidate.definition.id === definitionId),
    );
  if (task === undefined) throw new Error('No ready task in the simulated inbox');
  const owner = task.potentialOwners[0]?.username as string;
  return { task, ref: { origin: task.origin, instanceId: task.instanceId }, owner };
}

describe('the client against the simulated SAP system', () => {
  it('reads every open task, page by page, with the decisions each offers, as approvals for their owners', async () => {
    const sap = await simulator({ seed: 7, initialTasks: 12 });
    sap.advance(6);

    const open = await openTasks(sap, 5);

    const expected = [...sap.openTasks()]
      .sort(
        (a, b) => a.createdOn.getTime() - b.createdOn.getTime() || a.instanceId.localeCompare(b.instanceId),
      )
      .map((task) => task.instanceId);
    expect(expected.length).toBeGreaterThan(10);
    expect(open.map(({ task }) => task.InstanceID)).toEqual(expected);
    for (const { task, decisionOptions } of open) {
      const simulated = sap.openTasks().find((candidate) => candidate.instanceId === task.InstanceID);
      expect(decisionOptions.map(({ DecisionKey, Nature }) => [DecisionKey, Nature ?? ''])).toEqual(
        simulated?.options.map(({ key, nature }) => [key, nature]),
      );
      const approvers = toSourceApprovals({ task, decisionOptions }).map((approval) => approval.approver);
      expect(approvers).toEqual(
        simulated?.status === 'RESERVED'
          ? [simulated.processor?.username]
          : simulated?.potentialOwners.map((owner) => owner.username),
      );
    }
  });

  it('sees the inbox change over time: new tasks, edits, and decisions taken in SAP itself', async () => {
    const sap = await simulator({ seed: 11, initialTasks: 6 });
    const before = new Map((await openTasks(sap)).map((open) => [open.task.InstanceID, open]));

    const events = sap.advance(12);

    const after = new Map((await openTasks(sap)).map((open) => [open.task.InstanceID, open]));
    const ofKind = <Kind extends SimulatedEvent['kind']>(kind: Kind) =>
      events.filter((event): event is Extract<SimulatedEvent, { kind: Kind }> => event.kind === kind);
    const created = ofKind('created');
    const decided = ofKind('decided');
    const edited = ofKind('edited').filter(
      (event) => before.has(event.instanceId) && after.has(event.instanceId),
    );
    expect([created.length > 0, decided.length > 0, edited.length > 0]).toEqual([true, true, true]);
    for (const event of created) {
      if (!decided.some((decision) => decision.instanceId === event.instanceId)) {
        expect(after.has(event.instanceId)).toBe(true);
      }
    }
    for (const event of decided) expect(after.has(event.instanceId)).toBe(false);
    for (const event of edited) {
      const approvalsBefore = toSourceApprovals(before.get(event.instanceId) as OpenTask);
      const approvalsAfter = toSourceApprovals(after.get(event.instanceId) as OpenTask);
      expect(approvalsAfter[0]?.data).not.toEqual(approvalsBefore[0]?.data);
    }
    expect(sap.decisions().filter((decision) => decision.via === 'activity')).toHaveLength(decided.length);
  });

  it("takes a decision with the approver's own credentials: SAP records it and the task leaves the inbox", async () => {
    const sap = await simulator({ seed: 3 });
    const { ref, owner } = readyTask(sap);
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });
    const credentials = approverOf(sap, owner);

    const options = await client.decisionOptions(ref, { credentials, signal });
    const option = chooseDecision(options, 'approve', '');
    const task = await client.decide(
      ref,
      { decisionKey: option.DecisionKey, comments: '' },
      { credentials, signal },
    );

    expect(task.Status).toBe('COMPLETED');
    expect(sap.decisions()).toEqual([
      expect.objectContaining({
        instanceId: ref.instanceId,
        decisionKey: '0001',
        comments: '',
        username: owner,
        via: 'odata',
      }),
    ]);
    expect((await openTasks(sap)).map((open) => open.task.InstanceID)).not.toContain(ref.instanceId);
    // A token fetched as the approver, sent back with that session's cookie.
    const [, fetch, post] = sap.requests();
    expect(fetch).toMatchObject({
      method: 'GET',
      resource: '',
      username: owner,
      csrfToken: 'Fetch',
      sessionCookie: false,
    });
    expect(post).toMatchObject({
      method: 'POST',
      resource: 'Decision',
      username: owner,
      sessionCookie: true,
      status: 200,
    });
  });

  it('carries a rejection with its comment, and SAP refuses one without the comment it requires', async () => {
    const sap = await simulator({ seed: 5, initialTasks: 20 });
    const { ref, owner } = readyTask(sap, 'TS00008267');
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });
    const credentials = approverOf(sap, owner);

    const refused = await client
      .decide(ref, { decisionKey: '0002', comments: '' }, { credentials, signal })
      .catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(SapHttpError);
    expect(classifyFailure(refused)).toEqual({
      status: 'systemError',
      meta: { code: 'HTTP_400', message: 'SAP answered 400 to POST Decision: Enter a comment to reject' },
    });
    expect(sap.decisions()).toEqual([]);

    await client.decide(
      ref,
      { decisionKey: '0002', comments: "Over the team's budget" },
      { credentials, signal },
    );
    expect(sap.decisions()).toEqual([
      expect.objectContaining({
        instanceId: ref.instanceId,
        decisionKey: '0002',
        comments: "Over the team's budget",
      }),
    ]);
  });

  it.each([
    [
      'a wrong password',
      (sap: SapInboxSimulator, owner: string) => ({ ...approverOf(sap, owner), password: 'wrong' }),
    ],
    [
      'an expired password',
      (sap: SapInboxSimulator, owner: string) => {
        sap.expirePassword(owner);
        return approverOf(sap, owner);
      },
    ],
  ])('refuses %s with 401, an authentication error, and changes nothing', async (_, credentialsOf) => {
    const sap = await simulator({ seed: 3 });
    const { ref, owner } = readyTask(sap);
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });

    const error = await client
      .decide(ref, { decisionKey: '0001', comments: '' }, { credentials: credentialsOf(sap, owner), signal })
      .catch((caught: unknown) => caught);

    expect(error).toMatchObject({ name: 'SapHttpError', status: 401 });
    expect(classifyFailure(error).status).toBe('authenticationError');
    expect(sap.decisions()).toEqual([]);
    expect(sap.requests().map((seen) => [seen.method, seen.status])).toEqual([['GET', 401]]);
    const logon = await fetch(sap.serviceUrl, { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    expect(logon.status).toBe(401);
    expect(logon.headers.get('www-authenticate')).toBe(
      'Basic realm="SAP NetWeaver Application Server [SIM/100]"',
    );
    await logon.text();
  });

  it('fetches a new token once when the session expired between the fetch and the POST', async () => {
    const sap = await simulator({ seed: 3 });
    const { ref, owner } = readyTask(sap);
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });
    sap.refuseNextCsrfTokens(1);

    await client.decide(
      ref,
      { decisionKey: '0001', comments: '' },
      { credentials: approverOf(sap, owner), signal },
    );

    expect(sap.requests().map((seen) => [seen.method, seen.resource, seen.status])).toEqual([
      ['GET', '', 200],
      ['POST', 'Decision', 403],
      ['GET', '', 200],
      ['POST', 'Decision', 200],
    ]);
    expect(sap.decisions()).toHaveLength(1);
  });

  it('gives up after that one retry, with an authentication error and the task still open', async () => {
    const sap = await simulator({ seed: 3 });
    const { ref, owner } = readyTask(sap);
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });
    sap.refuseNextCsrfTokens(2);

    const error = await client
      .decide(ref, { decisionKey: '0001', comments: '' }, { credentials: approverOf(sap, owner), signal })
      .catch((caught: unknown) => caught);

    expect(classifyFailure(error).status).toBe('authenticationError');
    expect(sap.requests().filter((seen) => seen.method === 'POST')).toHaveLength(2);
    expect(sap.openTasks().map((task) => task.instanceId)).toContain(ref.instanceId);
  });

  it('refuses a decision on a task already decided in SAP as a system error', async () => {
    const sap = await simulator({ seed: 3 });
    const { ref, owner } = readyTask(sap);
    sap.decideInSap(ref.instanceId);
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });

    const error = await client
      .decide(ref, { decisionKey: '0001', comments: '' }, { credentials: approverOf(sap, owner), signal })
      .catch((caught: unknown) => caught);

    expect(classifyFailure(error)).toEqual({
      status: 'systemError',
      meta: {
        code: 'HTTP_400',
        message: `SAP answered 400 to POST Decision: Task ${ref.instanceId} is already completed`,
      },
    });
    expect(sap.decisions().map((decision) => decision.via)).toEqual(['activity']);
  });

  it('refuses a decision on a task another owner reserved, as a system error naming who reserved it', async () => {
    const sap = await simulator({ seed: 3 });
    // Activity until one owner of a task with two reserves it.
    const reservedByOne = () =>
      sap.openTasks().find((task) => task.status === 'RESERVED' && task.potentialOwners.length === 2);
    for (let step = 0; step < 500 && reservedByOne() === undefined; step += 1) sap.advance(1);
    const task = reservedByOne();
    if (task === undefined) throw new Error('No task with two owners was reserved in 500 steps');
    const holder = task.processor?.username as string;
    const other = task.potentialOwners.find((owner) => owner.username !== holder)?.username as string;
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });

    const error = await client
      .decide(
        { origin: task.origin, instanceId: task.instanceId },
        { decisionKey: '0001', comments: '' },
        { credentials: approverOf(sap, other), signal },
      )
      .catch((caught: unknown) => caught);

    expect(classifyFailure(error)).toEqual({
      status: 'systemError',
      meta: {
        code: 'HTTP_400',
        message: `SAP answered 400 to POST Decision: Task ${task.instanceId} is reserved by ${holder}; only that user can decide it`,
      },
    });
    expect(sap.decisions().filter((decision) => decision.via === 'odata')).toEqual([]);
  });

  it('answers 404 for a task that does not exist, a system error', async () => {
    const sap = await simulator({ seed: 3 });
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });

    const error = await client
      .decisionOptions(
        { origin: 'LOCAL_TGW', instanceId: '999999999999' },
        { credentials: sap.technicalUser, signal },
      )
      .catch((caught: unknown) => caught);

    expect(error).toMatchObject({ status: 404, sapMessage: 'Task 999999999999 of LOCAL_TGW was not found' });
    expect(classifyFailure(error).status).toBe('systemError');
  });

  it('skips no task when one leaves the inbox between two pages of a read', async () => {
    const sap = await simulator({ seed: 9, initialTasks: 10 });
    const openBefore = sap.openTasks().map((task) => task.instanceId);
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl, pageSize: 3 });
    const read: string[] = [];

    for await (const { task } of client.openTasks({ credentials: sap.technicalUser, signal })) {
      read.push(task.InstanceID);
      // Once the first page is read, its first task is decided in SAP: the rest of the list moves up by one.
      if (read.length === 3) sap.decideInSap(read[0] as string);
    }

    expect(new Set(read).size).toBe(read.length);
    expect([...read].sort()).toEqual([...openBefore].sort());
  });

  it('reads one task by its key for its agents, open or decided, and answers 404 to anyone else', async () => {
    const sap = await simulator({ seed: 3 });
    const { task, ref, owner } = readyTask(sap);
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });
    const stranger = sap.approvers.find(
      (approver) => !task.potentialOwners.some((user) => user.username === approver.username),
    );
    if (stranger === undefined) throw new Error('Every approver owns the task');

    const open = await client.task(ref, { credentials: approverOf(sap, owner), signal });
    sap.reserveInSap(ref.instanceId, owner);
    const reserved = await client.task(ref, { credentials: approverOf(sap, owner), signal });
    sap.decideInSap(ref.instanceId);
    const decided = await client.task(ref, { credentials: sap.technicalUser, signal });
    const refused = await client
      .task(ref, { credentials: approverOf(sap, stranger.username), signal })
      .catch((error: unknown) => error);

    expect([open.Status, open.Processor]).toEqual(['READY', undefined]);
    expect([reserved.Status, reserved.Processor]).toEqual(['RESERVED', owner]);
    expect([decided.Status, decided.Processor]).toEqual(['COMPLETED', owner]);
    expect(refused).toMatchObject({
      status: 404,
      sapMessage: `Task ${ref.instanceId} of LOCAL_TGW was not found`,
    });
  });

  it('refuses to read the inbox for the technical user with a wrong password', async () => {
    const sap = await simulator({ seed: 3 });
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });

    const reading = client.openTasks({
      credentials: { ...sap.technicalUser, password: 'guess' },
      signal,
    });

    await expect(reading.next()).rejects.toMatchObject({ status: 401 });
  });
});

describe('the client against the simulated SAP system, as SAP systems differ', () => {
  it('reads the decision options of each task: one task definition serves workflow steps with decisions of their own', async () => {
    const sap = await simulator({ seed: 7, initialTasks: 12 });
    const generic = sap.openTasks().filter((task) => task.definition.id === 'TS00008267');
    const steps = new Set(generic.map((task) => task.options.map(({ key }) => key).join()));
    expect(steps.size).toBe(2); // both steps are in the inbox

    const open = await openTasks(sap, 5);

    for (const { task, decisionOptions } of open) {
      const simulated = sap.openTasks().find((candidate) => candidate.instanceId === task.InstanceID)!;
      expect(decisionOptions.map(({ DecisionKey }) => DecisionKey)).toEqual(
        simulated.options.map(({ key }) => key),
      );
    }
  });

  it('follows d.__next when SAP pages the task collection on its side', async () => {
    const sap = await simulator({ seed: 7, initialTasks: 12, behaviour: { serverPageSize: 3 } });

    const open = await openTasks(sap, 100);

    expect(open.map(({ task }) => task.InstanceID).sort()).toEqual(
      sap
        .openTasks()
        .map(({ instanceId }) => instanceId)
        .sort(),
    );
  });

  it('reads on past pages shorter than $top that carry no d.__next', async () => {
    const sap = await simulator({
      seed: 7,
      initialTasks: 12,
      behaviour: { serverPageSize: 3, nextLinks: false },
    });

    const open = await openTasks(sap, 100);

    expect(open.map(({ task }) => task.InstanceID).sort()).toEqual(
      sap
        .openTasks()
        .map(({ instanceId }) => instanceId)
        .sort(),
    );
  });

  it('answers decision options without a Nature when told, as a system whose customizing keeps none', async () => {
    const sap = await simulator({ seed: 7, initialTasks: 3, behaviour: { emptyNatures: true } });

    const open = await openTasks(sap);

    expect(open.flatMap(({ decisionOptions }) => decisionOptions.map(({ Nature }) => Nature))).toEqual(
      open.flatMap(({ decisionOptions }) => decisionOptions.map(() => undefined)),
    );
    // Read by their texts, then: Approve and Release approve, Reject rejects, Return for rework is neither.
    expect(
      open.flatMap(({ decisionOptions }) =>
        decisionOptions.map((option) => [option.DecisionText, decisionTypeOf(option)]),
      ),
    ).toEqual(
      sap
        .openTasks()
        .flatMap(({ options }) =>
          options.map(({ text, nature }) => [
            text,
            nature === '' ? undefined : nature === 'POSITIVE' ? 'approve' : 'reject',
          ]),
        ),
    );
  });

  it('serves a task with decision options of its own, without a Nature, and takes a decision by their keys', async () => {
    const sap = await simulator({ seed: 7, initialTasks: 0 });
    const task = sap.createTask({
      potentialOwners: ['CNOVAK'],
      decisionOptions: [
        { key: '0010', text: 'Genehmigen', nature: '', commentMandatory: false },
        { key: '0020', text: 'Ablehnen', nature: '', commentMandatory: true },
        { key: '0030', text: 'Rückfrage', nature: '', commentMandatory: true },
      ],
    });
    const ref = { origin: task.origin, instanceId: task.instanceId };
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });

    const [open] = await openTasks(sap);
    expect(open?.decisionOptions).toEqual([
      { DecisionKey: '0010', DecisionText: 'Genehmigen', CommentMandatory: false, Nature: undefined },
      { DecisionKey: '0020', DecisionText: 'Ablehnen', CommentMandatory: true, Nature: undefined },
      { DecisionKey: '0030', DecisionText: 'Rückfrage', CommentMandatory: true, Nature: undefined },
    ]);
    await client.decide(
      ref,
      { decisionKey: '0020', comments: 'Zu teuer' },
      { credentials: approverOf(sap, 'CNOVAK'), signal },
    );
    expect(sap.decisions()).toMatchObject([
      { instanceId: task.instanceId, decisionKey: '0020', decisionText: 'Ablehnen', via: 'odata' },
    ]);
    expect(() =>
      sap.createTask({
        decisionOptions: [
          { key: '0010', text: 'A', nature: '', commentMandatory: false },
          { key: '0010', text: 'B', nature: '', commentMandatory: false },
        ],
      }),
    ).toThrow(RangeError);
  });

  it('takes sap-client on every URL: the inbox, one task, the options, the token fetch and the decision', async () => {
    const sap = await simulator({ seed: 7, initialTasks: 6 });
    const client = new SapInboxClient({ serviceUrl: sap.serviceUrl, sapClient: '100' });
    const { ref, owner } = readyTask(sap);
    const credentials = approverOf(sap, owner);

    const task = await client.task(ref, { credentials, signal });
    const options = await client.decisionOptions(ref, { credentials, signal });
    await client.decide(
      ref,
      { decisionKey: options[0]!.DecisionKey, comments: 'Fine.' },
      { credentials, signal },
    );
    const other = new SapInboxClient({ serviceUrl: sap.serviceUrl, sapClient: '200' });
    const refused = await other.task(ref, { credentials, signal }).catch((error: unknown) => error);

    expect(task.Status).toBe('READY');
    expect(sap.decisions().at(-1)).toMatchObject({ instanceId: ref.instanceId, via: 'odata' });
    expect(refused).toMatchObject({ status: 401 });
  });
});

describe('the simulated SAP system', () => {
  it('is the same for the same seed, and another for another seed', async () => {
    const project = (sap: SapInboxSimulator) =>
      sap
        .tasks()
        .map((task) => [task.instanceId, task.title, task.priority, task.status, task.processor?.username]);
    const [a, b, c] = await Promise.all([
      simulator({ seed: 42 }),
      simulator({ seed: 42 }),
      simulator({ seed: 43 }),
    ]);

    expect(a.advance(30)).toEqual(b.advance(30));
    c.advance(30);

    expect(project(a)).toEqual(project(b));
    expect(project(a)).not.toEqual(project(c));
  });

  it("answers with the fields of SAP's documented answers", async () => {
    const sap = await simulator({ seed: 3 });
    const get = async (path: string) => {
      const answer = await fetch(`${sap.serviceUrl}${path}`, {
        headers: {
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(`${sap.technicalUser.username}:${sap.technicalUser.password}`).toString('base64')}`,
        },
      });
      return { status: answer.status, body: (await answer.json()) as { d: { results: unknown[] } } };
    };
    const keys = (value: unknown) => Object.keys(value as object).sort();
    const [documentedTask] = fixtureJson('task-collection.json').d.results;
    const [documentedOption] = fixtureJson('decision-options.json').d.results;

    const tasks = await get('TaskCollection?$expand=PotentialOwners,CustomAttributeData&$top=1');
    const [task] = tasks.body.d.results as {
      PotentialOwners: { results: unknown[] };
      CustomAttributeData: { results: unknown[] };
      TaskSupports: unknown;
      InstanceID: string;
    }[];
    if (task === undefined) throw new Error('The simulated inbox answered no task');
    expect(keys(task)).toEqual(keys(documentedTask));
    expect(keys(task.TaskSupports)).toEqual(keys(documentedTask.TaskSupports));
    expect(keys(task.PotentialOwners.results[0])).toEqual(keys(documentedTask.PotentialOwners.results[0]));
    expect(keys(task.CustomAttributeData.results[0])).toEqual(
      keys(documentedTask.CustomAttributeData.results[0]),
    );

    const id = task.InstanceID;
    const options = await get(`DecisionOptions?SAP__Origin='LOCAL_TGW'&InstanceID='${id}'`);
    expect(keys(options.body.d.results[0])).toEqual(keys(documentedOption));

    const refused = await get("TaskCollection?$filter=Title eq 'x'");
    expect(refused.status).toBe(400);
    expect(keys((refused.body as unknown as { error: unknown }).error)).toEqual(
      keys(fixtureJson('odata-error-completed.json').error),
    );
  });
});
