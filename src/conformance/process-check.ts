/**
 * The opt-in check `sync.sigkill`: the author's connector as a real process under `connector run`, killed with
 * SIGKILL at points drawn from the seed while the source changes, and restarted; in the end the service holds the
 * source exactly, and no saved cursor ever moved back or ran ahead of what the service had.
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectorCommand } from '../internal/connector-command.js';
import { type Check, type CheckEnvironment, requires } from './check.js';
import { CursorWatch } from './cursor-watch.js';
import type { ConnectorProcess } from './driver.js';
import { ConformanceFailure } from './report.js';
import type { Stage } from './stage.js';
import { Wire, type WireListener, type WireRequest } from './wire.js';

/** Processes killed before the last one, which must finish a sync run. */
const KILLS = 4;
/** How long a process may take to start and finish a sync run. */
const RUN_LIMIT_MS = 30_000;
/** A sync run's pushes of approvals and its state writes. */
const SYNC_PATHS = new Set(['/v2/rawapprovals', '/v2/connector/state']);

/** One `connector run` process, behind a wire of its own. */
class WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly finished: Promise<void>;
  #output = '';

  constructor(spec: ConnectorProcess<never>, env: Record<string, string>) {
    const { command, args } = connectorCommand(['run', spec.module]);
    this.child = spawn(command, args, {
      cwd: spec.cwd ?? process.cwd(),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = once(this.child, 'exit').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
    let onFinished: () => void = () => {};
    this.finished = new Promise((resolve) => {
      onFinished = resolve;
    });
    const read = (chunk: Buffer) => {
      this.#output = `${this.#output}${chunk.toString()}`.slice(-20_000);
      if (this.#output.includes('"msg":"sync run finished"')) onFinished();
    };
    this.child.stdout?.on('data', read);
    this.child.stderr?.on('data', read);
  }

  /** The last lines it wrote, for a failure's message. */
  tail(): string {
    return this.#output.trim().split('\n').slice(-3).join(' | ');
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}

/** What a process was doing when it ended, or that it did not end within the limit. */
async function untilKilledOrFinished(worker: WorkerProcess, killed: Promise<void>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      killed.then(() => 'killed'),
      worker.finished.then(() => 'finished'),
      worker.exited.then(({ code }) => `exited with code ${code}`),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`still running after ${RUN_LIMIT_MS} ms`), RUN_LIMIT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The processes and wires of one run of the check, each opened through it and closed at its end. */
class Processes {
  readonly #wires: Wire[] = [];
  readonly #workers: WorkerProcess[] = [];
  readonly #spec: ConnectorProcess<never>;
  readonly #stage: Stage;
  readonly #watch: CursorWatch;
  readonly #env: Record<string, string>;

  constructor(spec: ConnectorProcess<never>, stage: Stage, watch: CursorWatch, env: Record<string, string>) {
    this.#spec = spec;
    this.#stage = stage;
    this.#watch = watch;
    this.#env = env;
  }

  /** A connector process behind a new wire, whose requests the check's cursor watch sees. */
  async start(listener: WireListener): Promise<{ wire: Wire; worker: WorkerProcess }> {
    const wire = await Wire.open(this.#stage.harness.backend.url, this.#watch.listener(listener));
    this.#wires.push(wire);
    const worker = new WorkerProcess(this.#spec, { ...this.#env, APPROVAL_SERVICE_URL: wire.url });
    this.#workers.push(worker);
    return { wire, worker };
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.kill('SIGKILL')));
    await Promise.all(this.#wires.map((wire) => wire.close()));
  }
}

/** The worker's own variables for a process of the check, in a folder of its own (its config and key ring). */
async function processEnv(
  spec: ConnectorProcess<never>,
  stage: Stage,
  directory: string,
): Promise<Record<string, string>> {
  const config = join(directory, 'connector.json');
  // Small batches: more points to die between.
  await writeFile(config, JSON.stringify({ sync: { batchSize: 2 } }));
  return {
    ...spec.env?.(stage.driver as never),
    APPROVAL_SERVICE_URL: '',
    APPROVAL_CONNECTOR_TOKEN: stage.harness.tenant.connectorToken,
    CONNECTOR_ROLE: 'sync',
    CONNECTOR_CONFIG: config,
    // A key ring of the check's own, and no operations port: nothing of the project's is touched.
    CONNECTOR_KEYS_FILE: join(directory, 'keys.json'),
    OPERATIONS_PORT: '',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'info',
  };
}

/**
 * One process killed: at the n-th push or state write of the process, before the service has it or after, as the
 * source changes (the points where a sync run's progress is at stake); or after its run, if it ended before.
 */
async function killOne(environment: CheckEnvironment, stage: Stage, processes: Processes): Promise<void> {
  for (let change = 0; change < 3; change += 1) await changeSource(environment, stage);
  const nth = Math.floor(environment.random() * 6);
  const after = environment.random() < 0.5;
  const changeThen = environment.random() < 0.5;
  let seen = -1;
  const here = (request: WireRequest) =>
    request.method === 'PUT' && SYNC_PATHS.has(request.path) && ++seen === nth;
  let onKilled: () => void = () => {};
  const killed = new Promise<void>((resolve) => {
    onKilled = resolve;
  });
  const kill = async (wire: Wire) => {
    wire.cut();
    if (changeThen) await changeSource(environment, stage);
    onKilled();
    await worker.kill('SIGKILL');
  };
  const { wire, worker } = await processes.start({
    request: async (request, w) => {
      if (!after && here(request)) await kill(w);
    },
    response: async (request, _status, _body, w) => {
      if (after && here(request)) await kill(w);
    },
  });
  const ended = await untilKilledOrFinished(worker, killed);
  if (ended !== 'killed' && ended !== 'finished') {
    throw new ConformanceFailure(
      'the connector process to run a sync run until it was killed',
      `it ${ended}: ${worker.tail()}`,
    );
  }
  // A run that ended before its n-th request is killed after it.
  wire.cut();
  await worker.kill('SIGKILL');
  await wire.idle();
}

async function run(environment: CheckEnvironment): Promise<void> {
  const spec = environment.subject.process as ConnectorProcess<never> | undefined;
  requires(
    spec,
    'the subject has no process: give `process: { module, env }` to run the connector under `connector run`',
  );
  const stage = await environment.stage();
  const watch = new CursorWatch(stage);
  const directory = await mkdtemp(join(tmpdir(), 'conformance-'));
  const processes = new Processes(spec, stage, watch, await processEnv(spec, stage, directory));
  try {
    for (let index = 0; index < 3; index += 1) await stage.create(environment.title());
    for (let round = 0; round < KILLS; round += 1) await killOne(environment, stage, processes);
    const { worker } = await processes.start({});
    const ended = await untilKilledOrFinished(worker, new Promise(() => {}));
    if (ended !== 'finished') {
      throw new ConformanceFailure(
        `the connector process started after ${KILLS} were killed with SIGKILL to finish a sync run`,
        `it ${ended}: ${worker.tail()}`,
      );
    }
    await worker.kill('SIGTERM');
    await environment.expectExact(
      stage,
      ` after ${KILLS} connector processes were killed with SIGKILL and one more ran`,
    );
    if (environment.source.savesCursor) watch.expectKept('the connector processes', { written: true });
  } finally {
    await processes.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/** One change of the source, drawn from the seed: a new request, an edit, or a resolution. */
async function changeSource(environment: CheckEnvironment, stage: Stage): Promise<void> {
  const ids = [...stage.created];
  const draw = environment.random();
  const id = ids[Math.floor(environment.random() * ids.length)];
  if (draw < 0.4 || id === undefined) await stage.create(environment.title());
  else if (draw < 0.8) await stage.driver.change(id, { title: environment.title('Changed') });
  else await stage.driver.resolve(id);
}

export const sigkillCheck: Check = {
  name: 'sync.sigkill',
  title:
    'opt-in: a connector process killed with SIGKILL at any point loses nothing and converges on restart',
  run,
};
