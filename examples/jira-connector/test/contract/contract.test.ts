import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JiraSimulator } from '../../simulator/simulator.js';
import { changedApprovals } from '../../src/approvals.js';
import { JiraHttpError } from '../../src/errors.js';
import { JiraClient } from '../../src/jira-client.js';

// The client and the simulated Jira against Atlassian's own OpenAPI descriptions (the facts the example depends
// on, kept in this folder with their source): every request the client sends, and every answer the simulator
// gives, go through a recording proxy and are checked against the operation they belong to. See README.md here.

interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: { name: string; in: string; required: boolean; schema: object }[];
  requestBody?: { required: boolean; schema: object };
  responses: Record<string, object | null>;
}

interface Contract {
  source: { repository: string; path: string; commit: string; documentation: string };
  operations: Operation[];
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

const contracts: Contract[] = ['jira-platform.json', 'jira-service-management.json'].map(
  (name) => JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8')) as Contract,
);

// Query values come as text: coerced to the parameter's type, a single value to an array where one is declared.
const ajv = new Ajv({ strict: false, validateFormats: false, coerceTypes: 'array', allErrors: true });

interface Checked {
  operation: Operation;
  pattern: RegExp;
  query: ValidateFunction;
  body: ValidateFunction | undefined;
  responses: Map<string, ValidateFunction | undefined>;
}

const operations: Checked[] = contracts.flatMap(({ operations, $defs }) =>
  operations.map((operation) => {
    const query = operation.parameters.filter((parameter) => parameter.in === 'query');
    const withDefs = (schema: object) => ajv.compile({ $defs, ...schema });
    return {
      operation,
      pattern: new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
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
  const status = String(exchange.status);
  if (!checked.responses.has(status)) {
    problems.push(`${where} answered ${status}, which the description does not list`);
  }
  const response = checked.responses.get(status);
  if (response !== undefined && exchange.contentType.startsWith('application/json')) {
    if (!response(JSON.parse(exchange.responseBody))) {
      problems.push(`${where} answer ${status}: ${ajv.errorsText(response.errors)}`);
    }
  }
  return problems;
}

describe("the Jira client and simulator against Atlassian's OpenAPI descriptions", () => {
  let simulator: JiraSimulator;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let now = Date.parse('2026-03-02T09:00:00.000Z');

  beforeAll(async () => {
    simulator = await JiraSimulator.start({ seed: 7, now: () => now, requests: 10 });
    proxy = await recordingProxy(simulator.url);
    const jira = new JiraClient({ baseUrl: proxy.url, ...simulator.syncAccount });

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
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
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
    const [first] = proxy.exchanges;
    const invented: Exchange = { ...first!, query: new URLSearchParams({ sortBy: 'updated' }) };
    const wrongBody: Exchange = {
      ...proxy.exchanges.find(({ method }) => method === 'POST')!,
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
      expect(source).toMatchObject({
        repository: expect.stringMatching(/^[\w.-]+\/[\w.-]+$/),
        path: expect.any(String),
        commit: expect.stringMatching(/^[0-9a-f]{40}$/),
        documentation: expect.stringMatching(/^https:\/\/developer\.atlassian\.com\//),
      });
    }
  });
});
