import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { RUN_USAGE, runRunCommand } from '../../src/cli/commands/run.js';
import { runInProcess } from './support/in-process.js';
import {
  type BackendProcess,
  type CliProcess,
  killAll,
  putApprovals,
  spawnCli,
  startBackendProcess,
} from './support/processes.js';

// `connector run` in a process of its own against `connector backend` in another, both as an operator starts them:
// what they do is observed through the backend's admin API and the worker's log lines and exit code. The tests share
// one backend, each with a tenant (a system and its connector token) of its own; what a test is about is the worker.
const MODULE = 'test/cli/support/worker-module.ts';
const folder = mkdtempSync(join(tmpdir(), 'connector-run-'));

/** Writes a config file (`CONNECTOR_CONFIG`) and returns its path. */
function configFile(name: string, options: unknown): string {
  const path = join(folder, name);
  writeFileSync(path, typeof options === 'string' ? options : JSON.stringify(options));
  return path;
}

// Syncs every 200 ms, polls often, and lets a task finish within a generous grace time.
const FAST = configFile('fast.json', {
  sync: { schedule: 200, reconcileSchedule: false },
  poller: { idleMinMs: 10, idleMaxMs: 50 },
  shutdown: { graceMs: 10_000, forceMs: 1_000 },
});

interface Task {
  id: string;
  status: 'waiting' | 'leased' | 'completed';
  deliveries: number;
  result?: { status: string };
}

let backend: BackendProcess;
let systemId: string;
let token: string;
let tenants = 0;

beforeAll(async () => {
  backend = await startBackendProcess();
});
beforeEach(async () => {
  tenants += 1;
  token = `run-command-connector-token-${tenants}`;
  ({
    system: { id: systemId },
  } = await backend.admin<{ system: { id: string } }>('POST', '/tenants', { connectorToken: token }));
});
afterEach(async () => {
  killAll(backend.process);
  // Faults apply to every tenant: none outlives its test.
  await backend.admin('DELETE', '/faults');
});
afterAll(() => {
  killAll();
  rmSync(folder, { recursive: true, force: true });
});

function startWorker(args: string[], env: Record<string, string> = {}): CliProcess {
  return spawnCli(['run', MODULE, ...args], {
    APPROVAL_SERVICE_URL: backend.url,
    APPROVAL_CONNECTOR_TOKEN: token,
    ...env,
  });
}

/** Puts approvals in the service and a task for each, as approvers acting in the app would. */
async function tasksFor(ids: string[]): Promise<Task[]> {
  await putApprovals(backend, token, ids);
  const tasks: Task[] = [];
  for (const approvalId of ids) {
    tasks.push(await backend.admin<Task>('POST', '/tasks', { systemId, type: 'approve', approvalId }));
  }
  return tasks;
}

const task = (id: string) => backend.admin<Task>('GET', `/tasks/${id}`);
const approvalIds = async () =>
  (await backend.admin<{ id: string }[]>('GET', `/systems/${systemId}/approvals`)).map(
    (approval) => approval.id,
  );
const resolvedIds = async () =>
  (await backend.admin<{ id: string; resolved: boolean }[]>('GET', `/systems/${systemId}/approvals`))
    .filter((approval) => approval.resolved)
    .map((approval) => approval.id);
const count = (worker: CliProcess, message: string) =>
  worker.messages().filter((logged) => logged === message).length;

describe('connector run', () => {
  it('runs the module’s connector; SIGTERM in the middle of a task lets it finish, and the worker exits 0', async () => {
    const worker = startWorker([], { CONNECTOR_CONFIG: FAST, HANDLER_MS: '3000', OPERATIONS_PORT: '0' });
    await vi.waitFor(() => expect(worker.messages()).toContain('sync run finished'), { timeout: 15_000 });
    expect((await approvalIds()).sort()).toEqual(['S-1', 'S-2']);
    // The probes' endpoints, on the port OPERATIONS_PORT asked for (0: a free one, logged).
    const url = worker.lines().find((line) => line.msg === 'operations endpoints listening')?.url as string;
    const ready = await request(`${url}/readyz`);
    expect(ready.statusCode).toBe(200);
    expect(await ready.body.json()).toMatchObject({ status: 'ready', checks: { poller: { status: 'ok' } } });

    const [running] = await tasksFor(['T-1']);
    // The handler's own line, not the task's leased state: the service marks a task leased before its answer reaches
    // the worker, and a stop in between ends the lease request, not a running handler.
    await vi.waitFor(() => expect(worker.messages()).toContain('handler started'), { timeout: 10_000 });
    expect((await task(running!.id)).status).toBe('leased');
    worker.child.kill('SIGTERM');

    expect(await worker.exitWithin(20_000)).toBe(0);
    expect(await task(running!.id)).toMatchObject({ status: 'completed', result: { status: 'success' } });
    const lines = worker.lines();
    const line = (message: string) => lines.find((logged) => logged.msg === message);
    expect(line('sync run finished')).toMatchObject({
      level: 30,
      mode: 'incremental',
      pushed: 2,
      changed: 2,
      resent: 0,
      durationMs: expect.any(Number),
    });
    expect(line('shutdown signal received; stopping')).toMatchObject({ level: 30, signal: 'SIGTERM' });
    expect(line('task finished')).toMatchObject({
      level: 30,
      taskId: running!.id,
      taskType: 'approve',
      status: 'success',
      durationMs: expect.any(Number),
    });
    const messages = worker.messages();
    expect(messages.indexOf('shutdown signal received; stopping')).toBeLessThan(
      messages.indexOf('task finished'),
    );
    expect(messages.at(-1)).toBe('connector stopped');
    expect(worker.stderr()).toBe('');
  }, 60_000);

  it('with --role sync, syncs on its schedule and never asks for a task', async () => {
    const [waiting] = await tasksFor(['T-1']);
    // Any Get task would use this fault up, and the service would list it no more.
    await backend.admin('POST', '/faults', {
      method: 'GET',
      path: '/v2/connector/tasks',
      fault: { type: 'delay', ms: 0 },
    });

    const worker = startWorker(['--role', 'sync'], { CONNECTOR_CONFIG: FAST });
    await vi.waitFor(() => expect(count(worker, 'sync run finished')).toBeGreaterThanOrEqual(3), {
      timeout: 15_000,
    });
    worker.child.kill('SIGTERM');
    expect(await worker.exitWithin(15_000)).toBe(0);

    expect(await approvalIds()).toEqual(expect.arrayContaining(['S-1', 'S-2']));
    expect(await backend.admin('GET', '/faults')).toMatchObject([
      { path: '/v2/connector/tasks', remaining: 1 },
    ]);
    expect(await task(waiting!.id)).toMatchObject({ status: 'waiting', deliveries: 0 });
  }, 60_000);

  it('with CONNECTOR_ROLE=tasks, runs the tasks and never syncs', async () => {
    const tasks = await tasksFor(['T-1', 'T-2']);
    // Any read or write of approvals would use this fault up.
    await backend.admin('POST', '/faults', { path: '/v2/rawapprovals*', fault: { type: 'delay', ms: 0 } });

    const worker = startWorker([], { CONNECTOR_ROLE: 'tasks', CONNECTOR_CONFIG: FAST });
    for (const { id } of tasks) {
      await vi.waitFor(async () => expect((await task(id)).result).toEqual({ status: 'success' }), {
        timeout: 15_000,
      });
    }
    worker.child.kill('SIGTERM');
    expect(await worker.exitWithin(15_000)).toBe(0);

    expect(count(worker, 'task finished')).toBe(2);
    expect(count(worker, 'sync run finished')).toBe(0);
    expect(await backend.admin('GET', '/faults')).toMatchObject([
      { path: '/v2/rawapprovals*', remaining: 1 },
    ]);
    expect((await approvalIds()).sort()).toEqual(['T-1', 'T-2']);
  }, 60_000);

  it('with CONNECTOR_ROLE=tasks and a source with lookup(), shows a decision in the service soon after its task', async () => {
    const [decided] = await tasksFor(['T-1']);
    const worker = startWorker([], {
      CONNECTOR_ROLE: 'tasks',
      CONNECTOR_CONFIG: FAST,
      SOURCE_LOOKUP: 'true',
    });
    await vi.waitFor(async () => expect((await task(decided!.id)).result).toEqual({ status: 'success' }), {
      timeout: 15_000,
    });
    // The default sync.afterTaskMs: a lookup of T-1 about a second later; this worker has no sync schedule at all.
    await vi.waitFor(async () => expect(await resolvedIds()).toContain('T-1'), { timeout: 15_000 });
    worker.child.kill('SIGTERM');
    expect(await worker.exitWithin(15_000)).toBe(0);

    expect(worker.lines()).toContainEqual(
      expect.objectContaining({ msg: 'sync run finished', mode: 'lookup', pushed: 1, changed: 0, resent: 1 }),
    );
  }, 60_000);

  it('refuses a bad configuration with one message naming every problem, and exits 2 having started nothing', async () => {
    const secret = 'file-secret-token-7c1d';
    const file = configFile('bad.json', {
      service: { token: secret, headers: { 'x-api-key': 12345 } },
      sync: { enabled: false, batchSize: 0 },
      poller: { concurency: 2 },
    });
    // Refused before the module is even loaded: run in this process, as a process of its own would run it.
    const worker = await runInProcess(runRunCommand, [MODULE, '--rol', 'tasks'], {
      APPROVAL_SERVICE_URL: 'approvals.example.com',
      OPERATIONS_PORT: 'ninety',
      CONNECTOR_ROLE: 'sink',
      CONNECTOR_CONFIG: file,
    });
    expect(worker.code).toBe(2);
    // As every command refuses its command line: the usage, then one line naming every problem, the last.
    expect(worker.stderr).toBe(
      `${RUN_USAGE}\n\n${[
        'Invalid worker configuration: Unknown option `--rol`; did you mean `--role`?',
        'Expected `APPROVAL_SERVICE_URL` to be an absolute http or https URL, got `"approvals.example.com"` (string)',
        'Expected `CONNECTOR_ROLE` to be one of `sync`, `tasks`, `all`, got `"sink"` (string)',
        'Expected `OPERATIONS_PORT` to be an integer from 0 to 65535, got `"ninety"` (string)',
        'Unexpected option `sync.enabled` in the config file: the role (--role, CONNECTOR_ROLE) says what a worker runs',
        'Expected `service.headers.x-api-key` to be a string, got a number (not shown: it is secret)',
        'Expected `sync.batchSize` to be an integer from 1 to 500, got `0` (number)',
        'Unknown option `poller.concurency`; did you mean `poller.concurrency`?',
      ].join('; ')}\n`,
    );
    expect(worker.stdout).toBe('');
    expect(worker.stderr).not.toContain(secret);
  });

  it('names the config file that cannot be read, or is not JSON, without quoting it', async () => {
    const missing = await runInProcess(runRunCommand, [MODULE], {
      APPROVAL_SERVICE_URL: backend.url,
      APPROVAL_CONNECTOR_TOKEN: token,
      CONNECTOR_CONFIG: join(folder, 'missing.json'),
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `\n\nInvalid worker configuration: Cannot read the config file ${join(folder, 'missing.json')} (\`CONNECTOR_CONFIG\`): ENOENT\n`,
    );

    const secret = 'quoted-secret-token-5e2b';
    const broken = configFile('broken.json', `{ "service": { "token": "${secret}" ,, } }`);
    const invalid = await runInProcess(runRunCommand, [MODULE], {
      APPROVAL_SERVICE_URL: backend.url,
      CONNECTOR_CONFIG: broken,
    });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(
      /\n\nInvalid worker configuration: The config file .*broken\.json \(`CONNECTOR_CONFIG`\) is not valid JSON/,
    );
    expect(invalid.stderr).not.toContain(secret);
  });

  it('runs a module whose default export is the connector itself', async () => {
    const worker = spawnCli(['run', 'test/cli/support/instance-module.ts'], {
      APPROVAL_SERVICE_URL: backend.url,
      APPROVAL_CONNECTOR_TOKEN: token,
    });
    await vi.waitFor(() => expect(worker.messages()).toContain('sync run finished'), { timeout: 15_000 });
    expect(await approvalIds()).toEqual(['S-1']);
    worker.child.kill('SIGTERM');
    expect(await worker.exitWithin(15_000)).toBe(0);
  });

  // One refused module a test: each is a process of its own, slow to start.
  it('refuses a missing module, exiting 2', async () => {
    // Without one, the module is dist/connector.js, which this repository does not build.
    const missing = spawnCli(['run'], { APPROVAL_SERVICE_URL: backend.url, APPROVAL_CONNECTOR_TOKEN: token });
    expect(await missing.exitWithin(15_000)).toBe(2);
    expect(missing.lines().at(-1)).toMatchObject({
      level: 50,
      msg: 'the connector was refused',
      err: { message: expect.stringMatching(/dist\/connector\.js does not exist/) },
    });
  });

  it('refuses a module with no default export, exiting 2', async () => {
    const notABuilder = spawnCli(['run', 'test/cli/support/processes.ts'], {
      APPROVAL_SERVICE_URL: backend.url,
      APPROVAL_CONNECTOR_TOKEN: token,
    });
    expect(await notABuilder.exitWithin(15_000)).toBe(2);
    expect(notABuilder.lines().at(-1)?.err).toMatchObject({
      message: expect.stringMatching(/has no default export/),
    });
  });

  it('refuses a module whose default export builds no connector, exiting 2', async () => {
    const notAConnector = spawnCli(['run', 'test/cli/support/not-a-connector-module.ts'], {
      APPROVAL_SERVICE_URL: backend.url,
      APPROVAL_CONNECTOR_TOKEN: token,
    });
    expect(await notAConnector.exitWithin(15_000)).toBe(2);
    expect(notAConnector.lines().at(-1)).toMatchObject({
      msg: 'the connector was refused',
      err: { message: expect.stringMatching(/^Invalid connector: /) },
    });
  });

  it('refuses a module whose default export is a class, exiting 2', async () => {
    const aClass = spawnCli(['run', 'test/cli/support/class-module.ts'], {
      APPROVAL_SERVICE_URL: backend.url,
      APPROVAL_CONNECTOR_TOKEN: token,
    });
    expect(await aClass.exitWithin(15_000)).toBe(2);
    expect(aClass.lines().at(-1)?.err).toMatchObject({
      message: expect.stringMatching(/is a class; export the connector, or a function that builds one/),
    });
  });

  it('exits 2 when building the connector finds its own configuration bad, and 1 when it fails otherwise', async () => {
    const refused = startWorker([], { BUILD_FAILS: 'validation' });
    expect(await refused.exitWithin(15_000)).toBe(2);
    expect(refused.lines().at(-1)).toMatchObject({
      level: 50,
      msg: 'the connector was refused',
      err: { message: 'Invalid source settings: Expected `SOURCE_URL` to be set, got nothing' },
    });

    const failed = startWorker([], { BUILD_FAILS: 'error' });
    expect(await failed.exitWithin(15_000)).toBe(1);
    expect(failed.lines().at(-1)).toMatchObject({
      level: 50,
      msg: 'the connector could not be built',
      err: { message: 'the source cannot be reached' },
    });
  });

  it('ends at once, as Node does, on a signal that comes while the connector is being built', async () => {
    const worker = startWorker([], { BUILD_MS: '30000' });
    await vi.waitFor(() => expect(worker.messages()).toContain('building the connector'), {
      timeout: 15_000,
    });
    worker.child.kill('SIGTERM');
    expect(await worker.exitWithin(15_000)).toBe(null);
    expect(worker.child.signalCode).toBe('SIGTERM');
  });

  it('starts the OpenTelemetry SDK from OTEL_* variables, says so in one line, and exports a task’s trace, which the backend recorded', async () => {
    // An OTLP/HTTP JSON receiver, as a collector would be.
    const exported: OtlpSpan[] = [];
    const collector = createHttpServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        exported.push(...spansOf(JSON.parse(body)));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
    try {
      const worker = startWorker([], {
        CONNECTOR_CONFIG: FAST,
        OTEL_SDK_DISABLED: 'false',
        OTEL_SERVICE_NAME: 'jira-connector',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_METRICS_EXPORTER: 'none',
        OTEL_LOGS_EXPORTER: 'none',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      });
      await vi.waitFor(() => expect(worker.messages()).toContain('sync run finished'), { timeout: 15_000 });
      const [created] = await tasksFor(['T-1']);
      await vi.waitFor(async () => expect((await task(created!.id)).status).toBe('completed'), {
        timeout: 10_000,
      });
      await vi.waitFor(() => expect(exported.map((span) => span.name)).toContain('task approve'), {
        timeout: 10_000,
      });
      worker.child.kill('SIGTERM');
      expect(await worker.exitWithin(20_000)).toBe(0);

      expect(
        worker
          .lines()
          .filter(
            (line) => line.msg === 'tracing with the OpenTelemetry SDK, configured by the OTEL_* variables',
          ),
      ).toEqual([
        expect.objectContaining({
          level: 30,
          exporter: 'otlp',
          endpoint,
          protocol: 'http/json',
          serviceName: 'jira-connector',
        }),
      ]);
      const root = exported.find(
        (span) =>
          span.name === 'task approve' && span.attributes['approval_connector.task.id'] === created!.id,
      );
      expect(root).toBeDefined();
      const trip = exported
        .filter((span) => span.traceId === root!.traceId)
        .map((span) => span.name)
        .sort();
      expect(trip).toEqual([
        'PATCH /v2/connector/tasks/{taskId}',
        'handler',
        'lease',
        'report result',
        'task approve',
      ]);
      // The backend, another process without the SDK, read the traceparent and remembers the trace.
      expect((await task(created!.id)) as unknown).toMatchObject({ resultTraceId: root!.traceId });
      // The worker's lines inside the task's spans carry its trace id.
      expect(worker.lines().find((line) => line.msg === 'handler started')).toMatchObject({
        trace_id: root!.traceId,
      });
      expect(exported.map((span) => span.name)).toContain('sync incremental');
      expect(worker.stderr()).toBe('');
    } finally {
      collector.close();
    }
  }, 60_000);

  it('logs readable lines, not JSON, with LOG_FORMAT=pretty', async () => {
    const worker = startWorker([], { CONNECTOR_CONFIG: FAST, LOG_FORMAT: 'pretty' });
    await vi.waitFor(() => expect(worker.stdout()).toMatch(/INFO.*: sync run finished/), { timeout: 15_000 });
    worker.child.kill('SIGTERM');
    expect(await worker.exitWithin(15_000)).toBe(0);
    expect(worker.lines()).toEqual([]);
    expect(worker.stdout()).toMatch(/INFO.*: connector stopped/);
  });

  it('prints its usage with --help', async () => {
    const help = await runInProcess(runRunCommand, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: connector run \[module\] \[--role sync\|tasks\|all\]/);
    expect(help.stdout).toContain('APPROVAL_CONNECTOR_TOKEN');
  });
});

describe('connector run, when it cannot start, says what to change in one line, without a stack, and exits 1', () => {
  /** Runs the worker to its end, its lines readable as on a terminal; answers its last line. */
  async function failedStart(env: Record<string, string>): Promise<string> {
    const worker = startWorker([], { LOG_FORMAT: 'pretty', ...env });
    expect(await worker.exitWithin(15_000)).toBe(1);
    const out = worker.stdout();
    expect(out).not.toMatch(/^\s+at /m);
    expect(out).not.toMatch(/stack|\{/);
    expect(out).not.toContain(token);
    const failed = out.split('\n').filter((line) => line.includes('the connector failed to start'));
    expect(failed).toHaveLength(1);
    return failed[0]!;
  }

  it('a token the service refuses: names APPROVAL_CONNECTOR_TOKEN and the URL, never the token', async () => {
    const line = await failedStart({ APPROVAL_CONNECTOR_TOKEN: 'not-a-token-of-this-service' });
    expect(line).toContain(
      `ERROR: the connector failed to start: The Approval Service at ${backend.url}/ refused the connector token (GET /v2/connector/state answered 401): set APPROVAL_CONNECTOR_TOKEN`,
    );
    expect(line).not.toContain('not-a-token-of-this-service');
  });

  it('a base URL with no service behind it: says so, naming the URL and APPROVAL_SERVICE_URL', async () => {
    const line = await failedStart({ APPROVAL_SERVICE_URL: `${backend.url}/approvals` });
    expect(line).toContain(
      `ERROR: the connector failed to start: There is no Approval Service API at ${backend.url}/approvals (PATCH /v2/connector answered 404): set APPROVAL_SERVICE_URL`,
    );
  });

  it('https to the plain-HTTP service: says it answered in plain HTTP and names the http URL', async () => {
    const secure = backend.url.replace('http:', 'https:');
    const line = await failedStart({ APPROVAL_SERVICE_URL: secure });
    expect(line).toContain(
      `ERROR: the connector failed to start: ${secure}/ answered in plain HTTP, not TLS: use ${backend.url}/`,
    );
  });

  it('http to a TLS server: says it speaks TLS and names the https URL', async () => {
    const tls = {
      key: readFileSync(new URL('../client/fixtures/tls-key.pem', import.meta.url)),
      cert: readFileSync(new URL('../client/fixtures/tls-cert.pem', import.meta.url)),
    };
    const server = createHttpsServer(tls, (_, response) => response.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const line = await failedStart({ APPROVAL_SERVICE_URL: url });
      expect(line).toContain(
        `ERROR: the connector failed to start: ${url}/ speaks TLS, not plain HTTP: use ${url.replace('http:', 'https:')}/`,
      );
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });

  it('an operations port in use: names the port and OPERATIONS_PORT', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const line = await failedStart({ OPERATIONS_PORT: String(port) });
      expect(line).toContain(
        `ERROR: the connector failed to start: Port ${port} on 127.0.0.1 is already in use: free it, or choose another port with OPERATIONS_PORT`,
      );
    } finally {
      taken.close();
    }
  });

  it('the same as a JSON line, with the error code', async () => {
    const worker = startWorker([], { APPROVAL_CONNECTOR_TOKEN: 'not-a-token-of-this-service' });
    expect(await worker.exitWithin(15_000)).toBe(1);
    expect(worker.lines().find((line) => line.level === 50)).toEqual(
      expect.objectContaining({
        code: 'connector_token_rejected',
        msg: expect.stringMatching(/^the connector failed to start: The Approval Service at /),
      }),
    );
    expect(worker.stdout()).not.toContain('not-a-token-of-this-service');
  });
});

/** A span as OTLP/JSON carries it, its attributes flattened. */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

/** The spans of an OTLP/JSON export request. */
function spansOf(body: unknown): OtlpSpan[] {
  type Value = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
  type Raw = Omit<OtlpSpan, 'attributes'> & { attributes?: { key: string; value: Value }[] };
  const request = body as { resourceSpans?: { scopeSpans?: { spans?: Raw[] }[] }[] };
  return (request.resourceSpans ?? []).flatMap((resource) =>
    (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        ...span,
        attributes: Object.fromEntries(
          (span.attributes ?? []).map(({ key, value }) => [
            key,
            value.stringValue ?? value.intValue ?? value.boolValue,
          ]),
        ),
      })),
    ),
  );
}
