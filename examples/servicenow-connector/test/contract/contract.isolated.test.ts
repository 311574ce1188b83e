import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceNowSimulator } from '../../simulator/simulator.js';
import { changedApprovals, lookupApprovals, readUsers } from '../../src/approvals.js';
import { ServiceNowClient } from '../../src/client.js';
import { APPROVER_FIELDS, ApproverRecord } from '../../src/model.js';

// The client and the simulated instance against ServiceNow's documentation (the facts the example depends on, kept
// in table-api.json with their source): every call the client makes, and every answer the simulator gives, are
// recorded where the client sends them (the global fetch) and checked against the call they belong to. See README.md.

interface Operation {
  name: string;
  method: string;
  path: string;
  query: Record<string, object>;
  requestHeaders: string[];
  responseHeaders: string[];
  statuses: number[];
  result: 'array' | 'object';
}

interface FieldDescription {
  type: string;
  choices?: Record<string, string>;
}

interface Contract {
  source: { repository: string; commit: string; pages: { path: string; documentation: string }[] };
  operations: Operation[];
  anyCall: { statuses: number[]; errorBody: object; rateLimitedHeaders: string[] };
  tables: Record<string, { fields: Record<string, FieldDescription>; writable: string[] }>;
}

/** A call as the client sent it and as the instance answered it. */
interface Exchange {
  method: string;
  url: URL;
  requestHeaders: Headers;
  requestBody: string | undefined;
  status: number;
  responseHeaders: Headers;
  responseBody: string;
}

const contract = JSON.parse(readFileSync(new URL('table-api.json', import.meta.url), 'utf8')) as Contract;
const ajv = new Ajv({ strict: false, allErrors: true });
const errorBody = ajv.compile(contract.anyCall.errorBody);
const withDisplayValues = ajv.compile({
  type: 'object',
  required: ['value', 'display_value'],
  properties: { value: { type: 'string' }, display_value: { type: 'string' }, link: { type: 'string' } },
  additionalProperties: false,
});

function operationOf({
  method,
  url,
}: Pick<Exchange, 'method' | 'url'>): { operation: Operation; table: string } | undefined {
  const [, table, sysId] = /^\/api\/now\/table\/([^/]+)(?:\/([^/]+))?$/.exec(url.pathname) ?? [];
  if (table === undefined) return undefined;
  const path = sysId === undefined ? '/api/now/table/{tableName}' : '/api/now/table/{tableName}/{sys_id}';
  const operation = contract.operations.find((one) => one.method === method && one.path === path);
  return operation === undefined ? undefined : { operation, table };
}

/** The field names an encoded query conditions on or orders by. */
function queryFields(query: string): string[] {
  return query
    .split('^')
    .filter((term) => term !== '')
    .map(
      (term) =>
        (/^ORDERBY(?:DESC)?([a-z_][a-z0-9_]*)$/.exec(term) ?? /^(?:OR)?([a-z_][a-z0-9_]*)/.exec(term))?.[1] ??
        term,
    );
}

/** What is wrong with the client's side of an exchange, by the documentation; empty when nothing is. */
function requestProblems(exchange: Exchange): string[] {
  const where = `${exchange.method} ${exchange.url.pathname}`;
  const found = operationOf(exchange);
  if (found === undefined) return [`${where}: no such call in the Table API's documentation`];
  const { operation, table } = found;
  const fields = contract.tables[table]?.fields;
  const problems: string[] = [];
  for (const [name, value] of exchange.url.searchParams) {
    const parameter = operation.query[name];
    if (parameter === undefined) problems.push(`${where}: ${name} is no parameter of the call`);
    else if (!ajv.validate(parameter, value)) problems.push(`${where}: ${name}=${value} ${ajv.errorsText()}`);
  }
  for (const header of operation.requestHeaders) {
    if (exchange.requestHeaders.get(header) !== 'application/json')
      problems.push(`${where}: no ${header}: application/json`);
  }
  if (fields !== undefined) {
    const named = [
      ...(exchange.url.searchParams.get('sysparm_fields')?.split(',') ?? []),
      ...queryFields(exchange.url.searchParams.get('sysparm_query') ?? ''),
    ];
    for (const field of named)
      if (!Object.hasOwn(fields, field)) problems.push(`${where}: ${table} has no field ${field}`);
  }
  if (exchange.requestBody !== undefined) {
    const body = JSON.parse(exchange.requestBody) as Record<string, unknown>;
    for (const [field, value] of Object.entries(body)) {
      const description = fields?.[field];
      if (!contract.tables[table]?.writable.includes(field))
        problems.push(`${where}: the body sets ${field}`);
      else if (description?.choices !== undefined && !Object.hasOwn(description.choices, String(value))) {
        problems.push(`${where}: ${field}=${String(value)} is none of its choices`);
      }
    }
  }
  return problems;
}

/** What is wrong with the instance's answer of an exchange, by the documentation; empty when nothing is. */
function answerProblems(exchange: Exchange): string[] {
  const where = `${exchange.method} ${exchange.url.pathname} answered ${exchange.status}`;
  const found = operationOf(exchange);
  if (found === undefined) return [];
  const { operation, table } = found;
  if (!operation.statuses.includes(exchange.status) && !contract.anyCall.statuses.includes(exchange.status)) {
    return [`${where}, which the documentation does not list`];
  }
  const body = JSON.parse(exchange.responseBody) as { result?: unknown };
  if (exchange.status >= 400) {
    const problems = errorBody(body) ? [] : [`${where}: ${ajv.errorsText(errorBody.errors)}`];
    if (exchange.status === 429) {
      for (const header of contract.anyCall.rateLimitedHeaders) {
        if (!exchange.responseHeaders.has(header)) problems.push(`${where} without ${header}`);
      }
    }
    return problems;
  }
  const problems: string[] = [];
  for (const header of operation.responseHeaders) {
    if (!exchange.responseHeaders.has(header)) problems.push(`${where} without ${header}`);
  }
  const records = operation.result === 'array' ? body.result : [body.result];
  if (!Array.isArray(records)) return [...problems, `${where} without a result ${operation.result}`];
  const fields = contract.tables[table]?.fields;
  for (const record of records as Record<string, unknown>[]) {
    for (const [field, value] of Object.entries(record)) {
      const description = fields?.[field];
      if (fields !== undefined && description === undefined)
        problems.push(`${where}: ${table} has no field ${field}`);
      if (!withDisplayValues(value))
        problems.push(`${where}: ${field} ${ajv.errorsText(withDisplayValues.errors)}`);
      const { value: raw, display_value: shown } = value as { value: string; display_value: string };
      if (description?.choices !== undefined && raw !== '' && description.choices[raw] !== shown) {
        problems.push(`${where}: ${field} ${raw} reads "${shown}", not "${description.choices[raw]}"`);
      }
    }
  }
  return problems;
}

describe("the ServiceNow client and simulator against ServiceNow's documentation", () => {
  const exchanges: Exchange[] = [];
  const realFetch = globalThis.fetch;
  let simulator: ServiceNowSimulator;
  let now = Date.parse('2026-03-02T09:00:00.000Z');

  beforeAll(async () => {
    simulator = await ServiceNowSimulator.start({ seed: 7, now: () => now, requests: 12 });
    globalThis.fetch = async (input, init) => {
      const answer = await realFetch(input, init);
      const responseBody = await answer.clone().text();
      exchanges.push({
        method: init?.method ?? 'GET',
        url: new URL(String(input)),
        requestHeaders: new Headers(init?.headers),
        requestBody: typeof init?.body === 'string' ? init.body : undefined,
        status: answer.status,
        responseHeaders: answer.headers,
        responseBody,
      });
      return answer;
    };
    const client = new ServiceNowClient({ instanceUrl: simulator.url, ...simulator.integrationUser });
    const reads = { tables: ['change_request', 'sc_req_item'], pageSize: 4 };

    // Every call the example makes, as the integration user and as an approver, failures included.
    const synced = [];
    for await (const approval of changedApprovals(client, undefined, reads)) synced.push(approval);
    now += 60_000;
    const [first, second] = simulator.waitingApprovals();
    simulator.retitle(first!.source_table!, first!.document_id!, 'Edited in ServiceNow');
    for await (const approval of changedApprovals(client, new Date(now - 30_000), reads))
      synced.push(approval);
    for await (const approval of lookupApprovals(client, [first!.sys_id!, '0'.repeat(32)], reads))
      synced.push(approval);
    await readUsers(client, [first!.approver!], reads);
    const approver = simulator.approvers.find(({ sysId }) => sysId === first!.approver)!;
    const asApprover = client.withCredentials(approver);
    await asApprover.get('sysapproval_approver', first!.sys_id!, APPROVER_FIELDS, ApproverRecord);
    await asApprover.get('sysapproval_approver', second!.sys_id!, APPROVER_FIELDS, ApproverRecord);
    await asApprover.update(
      'sysapproval_approver',
      first!.sys_id!,
      { state: 'approved', comments: 'Fine' },
      APPROVER_FIELDS,
      ApproverRecord,
    );
    simulator.behaviour.aclRefusesUpdates = true;
    await asApprover
      .update('sysapproval_approver', first!.sys_id!, { state: 'rejected' }, APPROVER_FIELDS, ApproverRecord)
      .catch(() => undefined);
    simulator.behaviour.aclRefusesUpdates = false;
    simulator.lockOut(approver.username);
    await asApprover
      .get('sysapproval_approver', first!.sys_id!, APPROVER_FIELDS, ApproverRecord)
      .catch(() => undefined);
    simulator.disrupt({ status: 429, retryAfterSeconds: 1 }, { calls: ['approvalUpdate'], times: 1 });
    await client
      .update('sysapproval_approver', first!.sys_id!, { state: 'approved' }, APPROVER_FIELDS, ApproverRecord)
      .catch(() => undefined);
    expect(synced.length).toBeGreaterThan(0);
  });

  afterAll(async () => {
    globalThis.fetch = realFetch;
    await simulator.close();
  });

  it('makes every call it depends on, and answers each in the statuses the documentation gives', () => {
    const seen = (name: string) =>
      exchanges.filter((exchange) => operationOf(exchange)?.operation.name === name);
    expect(contract.operations.map(({ name }) => [name, seen(name).length > 0])).toEqual(
      contract.operations.map(({ name }) => [name, true]),
    );
    expect(new Set(exchanges.map(({ status }) => status))).toEqual(new Set([200, 401, 403, 404, 429]));
  });

  it('sends only the parameters, headers, fields and values the documentation describes', () => {
    expect(exchanges.length).toBeGreaterThan(10);
    expect(exchanges.flatMap(requestProblems)).toEqual([]);
  });

  it('gets answers in the shapes the documentation describes: statuses, headers, fields, values and display values, errors', () => {
    expect(exchanges.flatMap(answerProblems)).toEqual([]);
  });

  it('finds a departure from the documentation: checks that can fail', () => {
    const list = exchanges.find((exchange) => operationOf(exchange)?.operation.name === 'list')!;
    const update = exchanges.find(({ method, status }) => method === 'PATCH' && status === 200)!;
    const failed = exchanges.find(({ status }) => status === 401)!;
    const invented = { ...list, url: new URL(`${list.url.href}&sysparm_order_by=sys_updated_on`) };
    const unknownField = {
      ...list,
      url: new URL(list.url.href.replace('sysparm_fields=', 'sysparm_fields=updated_at%2C')),
    };
    const wrongState = { ...update, requestBody: JSON.stringify({ state: 'approve' }) };
    const otherError = { ...failed, responseBody: JSON.stringify({ error: 'User Not Authenticated' }) };
    const relabelled = {
      ...update,
      responseBody: update.responseBody.replace('"display_value":"Approved"', '"display_value":"OK"'),
    };

    expect(requestProblems(invented).join()).toContain('sysparm_order_by is no parameter of the call');
    expect(requestProblems(unknownField).join()).toContain('has no field updated_at');
    expect(requestProblems(wrongState).join()).toContain('state=approve is none of its choices');
    expect(answerProblems(otherError).join()).toContain('must be object');
    expect(answerProblems({ ...list, status: 418 }).join()).toContain('does not list');
    expect(answerProblems(relabelled).join()).toContain('reads "OK", not "Approved"');
  });

  it('keeps where each description comes from', () => {
    expect(contract.source).toMatchObject({
      repository: 'ServiceNow/ServiceNowDocs',
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    for (const page of contract.source.pages) {
      expect(page).toMatchObject({
        path: expect.stringMatching(/^markdown\/.+\.md$/),
        documentation: expect.stringMatching(/^https:\/\/www\.servicenow\.com\/docs\//),
      });
    }
  });
});
