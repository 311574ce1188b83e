import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SapInboxSimulator, SERVICE_PATH } from '../../simulator/simulator.js';
import { SapInboxClient } from '../../src/client.js';
import { readLiteral } from '../../src/odata.js';

// The client and the simulated SAP system against SAP's own $metadata of TASKPROCESSING (the facts the example
// depends on, kept in taskprocessing.json with their source): every request the client sends, and every answer
// the simulator gives, go through a recording proxy and are checked against the entity set, entity types and
// function imports they belong to, with JSON Schemas built from those types. See README.md here.

interface Property {
  name: string;
  type: string;
  nullable: boolean;
}

interface Metadata {
  source: { repository: string; path: string; commit: string; documentation: string };
  namespace: string;
  entitySets: Record<string, string>;
  entityTypes: Record<string, { key: string[]; properties: Property[]; navigationProperties: string[] }>;
  complexTypes: Record<string, { properties: Property[] }>;
  functionImports: Record<
    string,
    { httpMethod: string; returnType: string; parameters: { name: string; type: string }[] }
  >;
  /** SAP Gateway's subscription and notification flow, as the service declares it. */
  subscriptions: {
    entitySets: Record<string, string>;
    entityTypes: Record<string, { key: string[]; properties: Property[] }>;
  };
}

interface Exchange {
  method: string;
  resource: string;
  query: URLSearchParams;
  status: number;
  contentType: string;
  responseBody: string;
}

const metadata = JSON.parse(
  readFileSync(new URL('taskprocessing.json', import.meta.url), 'utf8'),
) as Metadata;

/** The JSON Schema of an Edm type as OData V2's verbose JSON writes it. */
function schemaOf({ type, nullable }: Pick<Property, 'type' | 'nullable'>): object {
  const complex = type.startsWith(`${metadata.namespace}.`)
    ? type.slice(metadata.namespace.length + 1)
    : undefined;
  if (complex !== undefined) return { $ref: `#/$defs/${complex}` };
  const base: Record<string, object> = {
    'Edm.String': { type: 'string' },
    'Edm.Boolean': { type: 'boolean' },
    'Edm.Int16': { type: 'integer' },
    'Edm.Int32': { type: 'integer' },
    'Edm.DateTime': { type: 'string', pattern: '^/Date\\(-?\\d+([+-]\\d{4})?\\)/$' },
  };
  const schema = base[type];
  if (schema === undefined) throw new Error(`no schema for ${type}`);
  return nullable ? { anyOf: [schema, { type: 'null' }] } : schema;
}

// The navigation properties the client expands, and the entity type of their entries.
const EXPANDED: Record<string, string> = {
  PotentialOwners: 'UserInfo',
  CustomAttributeData: 'CustomAttribute',
};

function structure(properties: Property[], navigation: string[] = []): object {
  return {
    type: 'object',
    properties: {
      __metadata: { type: 'object' },
      ...Object.fromEntries(properties.map((property) => [property.name, schemaOf(property)])),
      ...Object.fromEntries(
        navigation.map((name) => [
          name,
          {
            anyOf: [
              { type: 'object', required: ['__deferred'], properties: { __deferred: { type: 'object' } } },
              ...(EXPANDED[name] === undefined
                ? []
                : [
                    {
                      type: 'object',
                      required: ['results'],
                      additionalProperties: false,
                      properties: {
                        results: { type: 'array', items: { $ref: `#/$defs/${EXPANDED[name]}` } },
                      },
                    },
                  ]),
            ],
          },
        ]),
      ),
    },
    required: properties.filter(({ nullable }) => !nullable).map(({ name }) => name),
    additionalProperties: false,
  };
}

const $defs = {
  ...Object.fromEntries(
    Object.entries(metadata.entityTypes).map(([name, type]) => [
      name,
      structure(type.properties, type.navigationProperties),
    ]),
  ),
  ...Object.fromEntries(
    Object.entries(metadata.complexTypes).map(([name, type]) => [name, structure(type.properties)]),
  ),
};

const ajv = new Ajv({ strict: false, allErrors: true });
const one = (type: string) =>
  ajv.compile({ $defs, type: 'object', required: ['d'], properties: { d: { $ref: `#/$defs/${type}` } } });
const many = (type: string) =>
  ajv.compile({
    $defs,
    type: 'object',
    required: ['d'],
    properties: {
      d: {
        type: 'object',
        required: ['results'],
        properties: {
          results: { type: 'array', items: { $ref: `#/$defs/${type}` } },
          __next: { type: 'string' },
        },
      },
    },
  });
const answers: Record<string, ValidateFunction> = {
  TaskCollection: many('Task'),
  entity: one('Task'),
  DecisionOptions: many('DecisionOption'),
  Decision: one('Task'),
};

const task = metadata.entityTypes.Task!;
const taskProperties = new Set(task.properties.map(({ name }) => name));
const COLLECTION_OPTIONS = new Set(['$filter', '$expand', '$orderby', '$skip', '$top', '$skiptoken']);

/** What is wrong with an exchange by SAP's $metadata; empty when nothing is. */
function problemsOf(exchange: Exchange): string[] {
  const where = `${exchange.method} ${exchange.resource}`;
  const problems: string[] = [];
  const names = [...exchange.query.keys()].filter((name) => name !== 'sap-client');
  const entity = /^(\w+)\((.*)\)$/.exec(exchange.resource);
  let answer: ValidateFunction | undefined;
  if (exchange.resource === '') {
    // The service document, read for a CSRF token.
    if (exchange.method !== 'GET') problems.push(`${where}: the service document is only read`);
  } else if (exchange.resource in metadata.entitySets) {
    answer = answers.TaskCollection;
    if (exchange.method !== 'GET') problems.push(`${where}: TaskCollection is not creatable`);
    for (const name of names) {
      if (!COLLECTION_OPTIONS.has(name))
        problems.push(`${where}: ${name} is no query option the client may send`);
    }
    for (const name of (exchange.query.get('$expand') ?? '').split(',').filter(Boolean)) {
      if (!task.navigationProperties.includes(name))
        problems.push(`${where}: $expand ${name} is no navigation`);
    }
    const mentioned = [
      ...(exchange.query.get('$filter') ?? '').matchAll(/(\w+) eq /g),
      ...(exchange.query.get('$orderby') ?? '').matchAll(/(\w+)(?: (?:asc|desc))?(?:,|$)/g),
    ].map(([, name]) => name!);
    for (const name of mentioned) {
      if (!taskProperties.has(name)) problems.push(`${where}: ${name} is no property of Task`);
    }
  } else if (entity !== null && entity[1]! in metadata.entitySets) {
    answer = answers.entity;
    const keys = entity[2]!.split(',').map((part) => part.split('=')[0]);
    if (JSON.stringify(keys) !== JSON.stringify(task.key))
      problems.push(`${where}: the key is ${task.key.join()}`);
    if (names.length > 0) problems.push(`${where}: ${names.join()} on an entity read`);
  } else if (exchange.resource in metadata.functionImports) {
    const imported = metadata.functionImports[exchange.resource]!;
    answer = answers[exchange.resource];
    if (exchange.method !== imported.httpMethod) {
      problems.push(`${where}: the function import is called with ${imported.httpMethod}`);
    }
    const declared = imported.parameters.map(({ name }) => name);
    for (const name of names)
      if (!declared.includes(name)) problems.push(`${where}: ${name} is no parameter`);
    for (const { name, type } of imported.parameters) {
      const value = exchange.query.get(name);
      if (value === null) problems.push(`${where}: ${name} is missing`);
      else if (type === 'Edm.String' && readLiteral(value) === undefined) {
        problems.push(`${where}: ${name} is not an OData string literal`);
      }
    }
  } else {
    problems.push(`${where}: no such entity set or function import in $metadata`);
  }
  if (
    answer !== undefined &&
    exchange.status === 200 &&
    exchange.contentType.startsWith('application/json')
  ) {
    if (!answer(JSON.parse(exchange.responseBody)))
      problems.push(`${where} answer: ${ajv.errorsText(answer.errors)}`);
  }
  return problems;
}

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
  for await (const _ of request) {
    // The client's calls carry no body.
  }
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(
      (entry): entry is [string, string] =>
        typeof entry[1] === 'string' && !['host', 'connection', 'content-length'].includes(entry[0]),
    ),
  );
  const url = new URL(request.url ?? '/', target);
  const answer = await fetch(url, { method: request.method, headers, redirect: 'manual' });
  const responseBody = await answer.text();
  const passed: Record<string, string | string[]> = {};
  answer.headers.forEach((value, name) => {
    if (
      !['content-length', 'transfer-encoding', 'connection', 'content-encoding', 'set-cookie'].includes(name)
    ) {
      passed[name] = value;
    }
  });
  if (answer.headers.getSetCookie().length > 0) passed['set-cookie'] = answer.headers.getSetCookie();
  const path = decodeURIComponent(url.pathname);
  const exchange: Exchange = {
    method: request.method ?? 'GET',
    resource: path.startsWith(SERVICE_PATH) ? path.slice(SERVICE_PATH.length) : path,
    query: url.searchParams,
    status: answer.status,
    contentType: answer.headers.get('content-type') ?? '',
    responseBody,
  };
  return { exchange, headers: passed };
}

describe("the SAP client and simulator against SAP's $metadata of TASKPROCESSING", () => {
  let simulator: SapInboxSimulator;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  const signal = new AbortController().signal;

  beforeAll(async () => {
    simulator = await SapInboxSimulator.start({ seed: 7, initialTasks: 12 });
    proxy = await recordingProxy(simulator.serviceUrl.slice(0, -SERVICE_PATH.length));
    const client = new SapInboxClient({
      serviceUrl: `${proxy.url}${SERVICE_PATH}`,
      sapClient: '100',
      pageSize: 5,
    });

    // Every call the example makes: the inbox read, one task, its options, and a decision.
    const open = [];
    for await (const item of client.openTasks({ credentials: simulator.technicalUser, signal }))
      open.push(item);
    const ready = simulator.openTasks().find(({ status }) => status === 'READY')!;
    const owner = simulator.approvers.find(
      ({ username }) => username === ready.potentialOwners[0]!.username,
    )!;
    const credentials = { username: owner.username, password: owner.password };
    const ref = { origin: ready.origin, instanceId: ready.instanceId };
    await client.task(ref, { credentials, signal });
    const [option] = await client.decisionOptions(ref, { credentials, signal });
    await client.decide(
      ref,
      { decisionKey: option!.DecisionKey, comments: "It's fine." },
      { credentials, signal },
    );
    expect(open.length).toBeGreaterThan(5);

    // Options without a Nature, as a system whose customizing keeps none answers them: a task created with its
    // own, and every task's while the system answers them all empty.
    const natureless = simulator.createTask({
      potentialOwners: [owner.username],
      decisionOptions: [
        { key: '0001', text: 'Genehmigen', nature: '', commentMandatory: false },
        { key: '0002', text: 'Ablehnen', nature: '', commentMandatory: true },
      ],
    });
    await client.decisionOptions(
      { origin: natureless.origin, instanceId: natureless.instanceId },
      { credentials, signal },
    );
    simulator.behaviour.emptyNatures = true;
    const other = simulator
      .openTasks()
      .find((task) => task !== natureless && task.instanceId !== ready.instanceId)!;
    const otherOwner = simulator.approvers.find(
      ({ username }) => username === other.potentialOwners[0]!.username,
    )!;
    await client.decisionOptions(
      { origin: other.origin, instanceId: other.instanceId },
      { credentials: { username: otherOwner.username, password: otherOwner.password }, signal },
    );
    simulator.behaviour.emptyNatures = false;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
    await simulator.close();
  });

  it('calls the entity set and each function import it depends on', () => {
    const called = new Set(
      proxy.exchanges.map(({ method, resource }) => `${method} ${resource.replace(/\(.*\)$/, '(…)')}`),
    );

    expect([...called].sort()).toEqual(
      ['GET ', 'GET TaskCollection', 'GET TaskCollection(…)', 'GET DecisionOptions', 'POST Decision'].sort(),
    );
  });

  it('sends only what $metadata declares, and gets entities of the types it declares', () => {
    expect(proxy.exchanges.length).toBeGreaterThan(10);
    expect(proxy.exchanges.filter(({ status }) => status !== 200)).toEqual([]);
    expect(proxy.exchanges.flatMap(problemsOf)).toEqual([]);
  });

  it('answers decision options without a Nature as $metadata declares them: DecisionKey, DecisionText, empty Nature, CommentMandatory', () => {
    const options = proxy.exchanges
      .filter(({ resource }) => resource === 'DecisionOptions')
      .flatMap(({ responseBody }) => (JSON.parse(responseBody) as { d: { results: object[] } }).d.results);
    const natureless = options.filter((option) => (option as { Nature: unknown }).Nature === '');

    expect(natureless.length).toBeGreaterThanOrEqual(4);
    expect(natureless).toContainEqual(
      expect.objectContaining({ DecisionKey: '0002', DecisionText: 'Ablehnen', CommentMandatory: true }),
    );
    const declared = metadata.complexTypes.DecisionOption!.properties.map(({ name }) => name);
    for (const option of natureless) {
      expect(
        Object.keys(option)
          .filter((name) => name !== '__metadata')
          .sort(),
      ).toEqual([...declared].sort());
    }
    expect(metadata.complexTypes.DecisionOption!.properties).toContainEqual({
      name: 'Nature',
      type: 'Edm.String',
      nullable: true,
    });
  });

  it('finds a departure from $metadata: a check that can fail', () => {
    const collection = proxy.exchanges.find(({ resource }) => resource === 'TaskCollection')!;
    const decision = proxy.exchanges.find(({ resource }) => resource === 'Decision')!;
    const body = JSON.parse(collection.responseBody);
    body.d.results[0].Nature = 'POSITIVE';

    expect(
      problemsOf({ ...collection, query: new URLSearchParams({ $expand: 'Approvers' }) }).join(),
    ).toContain('no navigation');
    expect(problemsOf({ ...collection, responseBody: JSON.stringify(body) }).join()).toContain(
      'must NOT have additional properties',
    );
    expect(problemsOf({ ...decision, method: 'GET' }).join()).toContain('called with POST');
    expect(
      problemsOf({ ...decision, query: new URLSearchParams({ SAP__Origin: 'LOCAL' }) }).join(),
    ).toContain('not an OData string literal');
  });

  it("declares SAP Gateway's subscriptions, whose notification names no task: why the example stays on the schedule", () => {
    const { entitySets, entityTypes } = metadata.subscriptions;
    const task = metadata.entityTypes.Task!;
    const notification = entityTypes.Notification!.properties.map(({ name }) => name);

    expect(entitySets).toEqual({
      SubscriptionCollection: 'TASKPROCESSING.Subscription',
      NotificationCollection: 'TASKPROCESSING.Notification',
    });
    expect(notification).toEqual([
      'SAP__Origin',
      'ID',
      'collection',
      'title',
      'updated',
      'changeType',
      'entriesOfInterest',
      'recipient',
    ]);
    // Its SAP__Origin is the notification's own (half of its key): nothing names the task that changed.
    expect(entityTypes.Notification!.key).toEqual(['SAP__Origin', 'ID']);
    expect(notification).not.toContain(task.key[1]);
  });

  it('keeps where $metadata comes from', () => {
    expect(metadata.source).toMatchObject({
      repository: 'hankhank123/Project1',
      path: 'model/metadata.xml',
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      documentation: expect.stringMatching(/^https:\/\/help\.sap\.com\//),
    });
  });
});
