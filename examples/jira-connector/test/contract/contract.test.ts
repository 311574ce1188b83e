import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import { type Logger, Secret } from 'approval-connector-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JiraSimulator } from '../../simulator/simulator.js';
import { changedApprovals } from '../../src/approvals.js';
import { JiraHttpError } from '../../src/errors.js';
import { JiraClient } from '../../src/jira-client.js';
import { adminWebhookLifecycle } from '../../src/webhook-lifecycle.js';

// The client and the simulated Jira against Atlassian's own descriptions (the facts the example depends on, kept in
// this folder with their source): every request the client sends, and every answer the simulator gives, go through
// a recording proxy and are checked against the operation they belong to; every webhook delivery the simulator
// sends is checked against what Atlassian's webhooks page says a delivery is. See README.md here.

interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: { name: string; in: string; required: boolean; schema: object }[];
  requestBody?: { required: boolean; schema: object };
  responses: Record<string, object | null>;
}

interface Contract {
  /** A repository's OpenAPI description at a commit, or a page of Atlassian's transcribed by hand. */
  source:
    | { repository: string; path: string; commit: string; documentation: string }
    | { documentation: string; sections: string[]; transcribed: string };
  operations: Operation[];
  /** What a webhook delivery is: its headers, and its body's schema. */
  delivery?: { headers: Record<string, { required: boolean; schema: object }>; body: object };
  $defs: Record<string, object>;
}

interface Exchange {
  method: string;
  path: string;
  query: URLSearchParams;
  requestBody: string;
  status: number;
  contentType: string;
  responseBody: string;
}

const contracts: Contract[] = [
  'jira-platform.json',
  'jira-service-management.json',
  'jira-webhooks.json',
].map((name) => JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8')) as Contract);
/** Every schema of the three: a delivery's body names the platform's IssueBean, UserDetails and Changelog. */
const $defs: Record<string, object> = Object.assign({}, ...contracts.map((contract) => contract.$defs));

// Query values come as text: coerced to the parameter's type, a single value to an array where one is declared.
const ajv = new Ajv({ strict: false, validateFormats: false, coerceTypes: 'array', allErrors: true });

interface Checked {
  operation: Operation;
  pattern: RegExp;
  query: ValidateFunction;
  body: ValidateFunction | undefined;
  responses: Map<string, ValidateFunction | undefined>;
}

const withDefs = (schema: object) => ajv.compile({ $defs, ...schema });

const operations: Checked[] = contracts.flatMap(({ operations }) =>
  operations.map((operation) => {
    const query = operation.parameters.filter((parameter) => parameter.in === 'query');
    return {
      operation,
      pattern: new RegExp(`^${operation.path.replaceAll('.', '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      query: withDefs({
        type: 'object',
        properties: Object.fromEntries(query.map(({ name, schema }) => [name, schema])),
        required: query.filter(({ required }) => required).map(({ name }) => name),
        additionalProperties: false,
      }),
      body: operation.requestBody === undefined ? undefined : withDefs(operation.requestBody.schema),
      responses: new Map(
        Object.entries(operation.responses).map(([status, schema]) => [
          status,
          schema === null ? undefined : withDefs(schema),
        ]),
      ),
    };
  }),
);

/** A proxy in front of the simulator that records each request and its answer, as they were sent. */
async function recordingProxy(
  target: string,
): Promise<{ url: string; exchanges: Exchange[]; server: Server }> {
  const exchanges: Exchange[] = [];
  const server = createServer((request, response) => {
    forward(request, target).then(
      ({ exchange, headers }) => {
        exchanges.push(exchange);
        response.writeHead(exchange.status, headers);
        response.end(exchange.responseBody);
      },
      () => response.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, exchanges, server };
}

async function forward(request: IncomingMessage, target: string) {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  const requestBody = Buffer.concat(chunks).toString('utf8');
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(
      (entry): entry is [string, string] =>
        typeof entry[1] === 'string' && !['host', 'connection', 'content-length'].includes(entry[0]),
    ),
  );
  const url = new URL(request.url ?? '/', target);
  const answer = await fetch(url, {
    method: request.method,
    headers,
    body: requestBody === '' ? undefined : requestBody,
    redirect: 'manual',
  });
  const responseBody = await answer.text();
  const passed: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(name)) {
      passed[name] = value;
    }
  });
  const exchange: Exchange = {
    method: request.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
    requestBody,
    status: answer.status,
    contentType: answer.headers.get('content-type') ?? '',
    responseBody,
  };
  return { exchange, headers: passed };
}

/** What is wrong with an exchange by its operation's description; empty when nothing is. */
function problemsOf(exchange: Exchange): string[] {
  const where = `${exchange.method} ${exchange.path}`;
  const checked = operations.find(
    ({ operation, pattern }) => operation.method === exchange.method && pattern.test(exchange.path),
  );
  if (checked === undefined) return [`${where}: no such operation in the vendor's description`];
  const problems: string[] = [];
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(exchange.query.keys())) {
    const values = exchange.query.getAll(name);
    query[name] = values.length === 1 ? values[0]! : values;
  }
  if (!checked.query(query)) problems.push(`${where} query: ${ajv.errorsText(checked.query.errors)}`);
  if (checked.body !== undefined && !checked.body(JSON.parse(exchange.requestBody))) {
    problems.push(`${where} body: ${ajv.errorsText(checked.body.errors)}`);
  }
  // A range (`2XX`), as OpenAPI writes one, where the description gives no status of its own.
  const listed = [String(exchange.status), `${String(exchange.status)[0]}XX`].find((key) =>
    checked.responses.has(key),
  );
  if (listed === undefined) {
    problems.push(`${where} answered ${exchange.status}, which the description does not list`);
  }
  const response = listed === undefined ? undefined : checked.responses.get(listed);
  if (response !== undefined && exchange.contentType.startsWith('application/json')) {
    if (!response(JSON.parse(exchange.responseBody))) {
      problems.push(`${where} answer ${exchange.status}: ${ajv.errorsText(response.errors)}`);
    }
  }
  return problems;
}

/** A webhook delivery as it was received. */
interface Delivery {
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Where the simulator delivers its webhooks: each delivery recorded as it came, answered 204. */
async function deliveryReceiver(): Promise<{ url: string; deliveries: Delivery[]; server: Server }> {
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      deliveries.push({ method: request.method ?? '', headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/push`, deliveries, server };
}

const delivery = contracts.find((contract) => contract.delivery !== undefined)!.delivery!;
const deliveryBody = withDefs(delivery.body);
const deliveryHeaders = Object.entries(delivery.headers).map(
  ([name, { required, schema }]) => [name, required, withDefs(schema)] as const,
);

/** What is wrong with a delivery by the description of one; empty when nothing is. */
function deliveryProblems(received: Delivery): string[] {
  const problems: string[] = [];
  if (received.method !== 'POST') problems.push(`a delivery by ${received.method}, not POST`);
  if (!/^application\/json\b/.test(received.headers['content-type'] ?? ''))
    problems.push('a body that is not JSON');
  for (const [name, required, check] of deliveryHeaders) {
    const value = received.headers[name];
    if (value === undefined) {
      if (required) problems.push(`no ${name} header`);
    } else if (!check(value)) problems.push(`${name}: ${ajv.errorsText(check.errors)}`);
  }
  if (!deliveryBody(JSON.parse(received.body))) problems.push(`body: ${ajv.errorsText(deliveryBody.errors)}`);
  return problems;
}

describe("the Jira client and simulator against Atlassian's descriptions", () => {
  const secret = 'a-shared-secret-0123';
  let simulator: JiraSimulator;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let receiver: Awaited<ReturnType<typeof deliveryReceiver>>;
  let now = Date.parse('2026-03-02T09:00:00.000Z');

  beforeAll(async () => {
    simulator = await JiraSimulator.start({ seed: 7, now: () => now, requests: 10 });
    proxy = await recordingProxy(simulator.url);
    receiver = await deliveryReceiver();
    const jira = new JiraClient({ baseUrl: proxy.url, ...simulator.syncAccount });
    const app = new JiraClient({ baseUrl: proxy.url, accessToken: simulator.app.accessToken });
    await webhookCalls({ jira, app, site: simulator, url: receiver.url, secret });
    // A delivery Jira retried, as after an acknowledgment it did not see.
    simulator.behaviour.webhookDuplicates = 1;
    simulator.createRequest('10');

    // Every call the example makes, as the sync account and as an approver, failures included.
    const synced = [];
    for await (const approval of changedApprovals(jira, simulator.jql, new Date(now - 3 * 3_600_000), {
      pageSize: 2,
    })) {
      synced.push(approval);
    }
    const [gone] = simulator.requests();
    simulator.deleteRequest(gone!.key);
    await jira.issue(gone!.id);
    await jira.getRequest(gone!.id).catch((error: unknown) => error);
    const request = simulator.requests().find(({ approvals }) => approvals[0]?.finalDecision === 'pending')!;
    const approval = request.approvals[0]!;
    const approver = simulator.accounts.find(
      ({ accountId }) => accountId === approval.approvers[0]!.accountId,
    )!;
    const asApprover = jira.withCredentials(approver);
    await asApprover.myself();
    await asApprover.getApproval(request.key, approval.id);
    now += 60_000;
    await asApprover.answerApproval(request.key, approval.id, 'approve');
    const again = await asApprover
      .answerApproval(request.key, approval.id, 'decline')
      .catch((error) => error);
    expect(again).toBeInstanceOf(JiraHttpError);
    await asApprover.addComment(request.key, 'Approved: within the budget.');
    expect(synced.length).toBeGreaterThan(0);
    await simulator.webhooksSettled();
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
    await simulator.close();
  });

  it('calls every operation it depends on, and only those', () => {
    const called = new Set(
      proxy.exchanges.map(
        (exchange) =>
          operations.find(
            ({ operation, pattern }) => operation.method === exchange.method && pattern.test(exchange.path),
          )?.operation.operationId,
      ),
    );

    expect([...called].sort()).toEqual(operations.map(({ operation }) => operation.operationId).sort());
  });

  it('sends only the parameters and bodies the descriptions declare, and gets only the answers they describe', () => {
    expect(proxy.exchanges.length).toBeGreaterThan(10);
    expect(proxy.exchanges.flatMap(problemsOf)).toEqual([]);
  });

  it('answers an approval no longer waiting with the status the description gives it: 409', () => {
    const answers = proxy.exchanges.filter(
      ({ method, path }) => method === 'POST' && path.includes('/approval/'),
    );

    expect(answers.map(({ status }) => status)).toEqual([200, 409]);
  });

  it('finds a departure from the descriptions: a check that can fail', () => {
    const first = proxy.exchanges.find(({ path }) => path === '/rest/api/3/search/jql');
    const invented: Exchange = { ...first!, query: new URLSearchParams({ sortBy: 'updated' }) };
    const wrongBody: Exchange = {
      ...proxy.exchanges.find(({ method, path }) => method === 'POST' && path.includes('/approval/'))!,
      requestBody: JSON.stringify({ decision: 'approved' }),
    };
    const unlisted: Exchange = { ...first!, status: 418 };

    expect(problemsOf(invented).join()).toContain('must NOT have additional properties');
    expect(problemsOf(wrongBody).join()).toContain('must be equal to one of the allowed values');
    expect(problemsOf(unlisted).join()).toContain('does not list');
    expect(problemsOf({ ...first!, path: '/rest/api/3/search' })).toHaveLength(1);
  });

  it('keeps where each description comes from', () => {
    for (const { source } of contracts) {
      expect(source).toMatchObject(
        'repository' in source
          ? {
              repository: expect.stringMatching(/^[\w.-]+\/[\w.-]+$/),
              path: expect.any(String),
              commit: expect.stringMatching(/^[0-9a-f]{40}$/),
              documentation: expect.stringMatching(/^https:\/\/developer\.atlassian\.com\//),
            }
          : {
              documentation: expect.stringMatching(/^https:\/\/developer\.atlassian\.com\//),
              sections: expect.arrayContaining([expect.any(String)]),
            },
      );
    }
  });

  it("refuses the dynamic webhooks to an account with an API token, and a filter outside Jira's subset in a 200", () => {
    const registrations = proxy.exchanges.filter(
      ({ method, path }) => method === 'POST' && path === '/rest/api/3/webhook',
    );

    expect(registrations.map(({ status }) => status)).toEqual([403, 200]);
    expect(JSON.parse(registrations[1]!.responseBody).webhookRegistrationResult).toEqual([
      { createdWebhookId: expect.any(Number) },
      { errors: [expect.any(String)] },
    ]);
  });

  it('delivers each change with the headers and the body the webhooks page describes, signed with the secret', () => {
    const events = new Set(receiver.deliveries.map(({ body }) => JSON.parse(body).webhookEvent));

    expect([...events].sort()).toEqual(['jira:issue_created', 'jira:issue_deleted', 'jira:issue_updated']);
    expect(receiver.deliveries.some(({ headers }) => headers['x-atlassian-webhook-retry'] === '1')).toBe(
      true,
    );
    expect(receiver.deliveries.flatMap(deliveryProblems)).toEqual([]);
    for (const { headers, body } of receiver.deliveries) {
      expect(headers['x-hub-signature']).toBe(
        `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      );
    }
  });

  it('finds a delivery that departs from the description: a check that can fail', () => {
    const [first] = receiver.deliveries as [Delivery];
    const { 'x-atlassian-webhook-identifier': _, ...unidentified } = first.headers;
    const body = JSON.parse(first.body);

    expect(deliveryProblems({ ...first, headers: unidentified })).toEqual([
      'no x-atlassian-webhook-identifier header',
    ]);
    expect(
      deliveryProblems({ ...first, headers: { ...first.headers, 'x-hub-signature': 'sha1=00' } }),
    ).toHaveLength(1);
    expect(deliveryProblems({ ...first, body: JSON.stringify({ ...body, timestamp: 'now' }) })).toHaveLength(
      1,
    );
    expect(
      deliveryProblems({
        ...first,
        body: JSON.stringify({ ...body, issue: { ...body.issue, status: 'x' } }),
      }),
    ).toHaveLength(1);
  });
});

/**
 * Every webhook call the example's client makes, through the proxy: the connector's admin webhook kept as the kit
 * would (registered, registered again at a restart, checked, deleted, and registered for the deliveries), an
 * approver refused it, and the dynamic webhooks as an app manages them, and as an account may not.
 */
async function webhookCalls(options: {
  jira: JiraClient;
  app: JiraClient;
  site: JiraSimulator;
  url: string;
  secret: string;
}): Promise<void> {
  const { jira, app, site, url, secret } = options;
  const silent: Logger = {
    trace() {},
    debug() {},
    info() {},
    warn() {},
    error() {},
    fatal() {},
    child: () => silent,
  };
  const context = {
    signal: new AbortController().signal,
    logger: silent,
    state: { read: () => undefined, write: async () => {} },
    secret: new Secret(secret),
  };
  const lifecycle = adminWebhookLifecycle(jira, site.jql);
  const first = await lifecycle.register({ url: `${url}/first` }, context);
  await lifecycle.register({ url: `${url}/first` }, context);
  await lifecycle.exists!(first, context);
  await lifecycle.unregister!(first, context);
  await jira.getAdminWebhook(first.id);
  await lifecycle.register({ url }, context);
  const ada = site.accounts.find(({ email }) => email === 'ada@example.com')!;
  await jira
    .withCredentials(ada)
    .listAdminWebhooks()
    .catch((error: unknown) => error);

  const wanted = [{ events: ['jira:issue_updated'], jqlFilter: site.jql }];
  await jira.registerDynamicWebhooks(`${url}/dynamic`, wanted).catch((error: unknown) => error);
  const [created] = await app.registerDynamicWebhooks(`${url}/dynamic`, [
    ...wanted,
    { events: ['jira:issue_updated'], jqlFilter: 'updated > -1d' },
  ]);
  for await (const _ of app.listDynamicWebhooks());
  const id = (created as { id: number }).id;
  await app.refreshDynamicWebhooks([id]);
  await app.deleteDynamicWebhooks([id]);
}
