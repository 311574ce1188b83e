/**
 * Task workers run in a process of their own (`client-process.ts`): the kit's worker with a no-op handler, a
 * hand-written undici loop doing the same Get task and Update task result, and idle kit workers whose Get task
 * requests are counted. Requests are observed on undici's diagnostics channels, the same way for the kit and the
 * loop, so both are timed alike: from the first Get task request to the last result acknowledged.
 */
import diagnostics from 'node:diagnostics_channel';
import { Pool } from 'undici';
import { ConnectorWorker, MemoryKeyStore } from '../../src/worker/index.js';
import { LazyConnector } from './lazy-source.js';
import { type Measured, startMeasuring } from './measure.js';

/** The kit's worker or a hand-written undici loop. */
export type TaskRunner = 'kit' | 'undici';

/** One run over a system whose tasks are all waiting before it starts. */
export interface TaskRun {
  url: string;
  token: string;
  /** Tasks waiting; the run ends when each has a result acknowledged. */
  count: number;
  /** Tasks at once: the kit's `poller.concurrency`, the loop's requests in flight. */
  concurrency: number;
}

const TASKS_PATH = '/v2/connector/tasks';

interface RequestMessage {
  request: { method: string; path: string };
}

interface HeadersMessage extends RequestMessage {
  response: { statusCode: number };
}

/**
 * Calls `lease` for each Get task request created, `result` for each result the service acknowledged and `connected`
 * for each connection opened.
 */
function watchTaskRequests(on: {
  lease?: () => void;
  result?: () => void;
  connected?: () => void;
}): () => void {
  const created = (message: unknown) => {
    const { request } = message as RequestMessage;
    if (request.method === 'GET' && request.path === TASKS_PATH) on.lease?.();
  };
  const answered = (message: unknown) => {
    const { request, response } = message as HeadersMessage;
    if (
      request.method === 'PATCH' &&
      request.path.startsWith(`${TASKS_PATH}/`) &&
      response.statusCode === 200
    )
      on.result?.();
  };
  const connected = () => on.connected?.();
  diagnostics.subscribe('undici:request:create', created);
  diagnostics.subscribe('undici:request:headers', answered);
  diagnostics.subscribe('undici:client:connected', connected);
  return () => {
    diagnostics.unsubscribe('undici:request:create', created);
    diagnostics.unsubscribe('undici:request:headers', answered);
    diagnostics.unsubscribe('undici:client:connected', connected);
  };
}

/** A measured task run, with the connections the runner opened to the service. */
export interface TasksMeasured extends Measured {
  connections: number;
}

/**
 * Measures from the first Get task request to the `count`-th result acknowledged, while `work` runs, and counts the
 * connections opened meanwhile.
 */
async function measureTasks(
  count: number,
  work: (done: Promise<void>) => Promise<void>,
): Promise<TasksMeasured> {
  let measuring: ReturnType<typeof startMeasuring> | undefined;
  let measured: Measured | undefined;
  let results = 0;
  let connections = 0;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const stop = watchTaskRequests({
    lease: () => {
      measuring ??= startMeasuring();
    },
    result: () => {
      results += 1;
      if (results === count) {
        measured = measuring?.stop();
        finish();
      }
    },
    connected: () => {
      connections += 1;
    },
  });
  try {
    await work(done);
  } finally {
    stop();
  }
  if (measured === undefined) throw new Error(`${results} of ${count} results acknowledged`);
  return { ...measured, connections };
}

/** A worker of the kit, sync off, the task poller with its defaults but for `concurrency`, logs silent. */
function kitWorker(url: string, token: string, poller: { concurrency?: number } = {}): ConnectorWorker {
  return new ConnectorWorker(new LazyConnector(0), {
    service: { baseUrl: url, token },
    logger: { level: 'silent' },
    keyStore: new MemoryKeyStore(),
    sync: { enabled: false },
    poller,
  });
}

/** The kit's worker with a no-op handler, until every task has a result. */
async function runKit(run: TaskRun): Promise<TasksMeasured> {
  const worker = kitWorker(run.url, run.token, { concurrency: run.concurrency });
  return measureTasks(run.count, async (done) => {
    await worker.start();
    await done;
    await worker.stop();
  });
}

/**
 * What a developer would write with undici alone: `concurrency` loops, each leasing a task with Get task, reading
 * its id, and reporting `success` with Update task result, on a pool of as many connections, until Get task has
 * nothing.
 */
async function runUndici(run: TaskRun): Promise<TasksMeasured> {
  const pool = new Pool(run.url, { connections: run.concurrency });
  const headers = { authorization: `Bearer ${run.token}` };
  const result = JSON.stringify({ taskResult: { status: 'success' } });
  const loop = async () => {
    for (;;) {
      const leased = await pool.request({ method: 'GET', path: TASKS_PATH, headers });
      const answer = (await leased.body.json()) as { data?: { task?: { id: string } | null } };
      if (leased.statusCode !== 200) throw new Error(`Get task answered ${leased.statusCode}`);
      const task = answer.data?.task;
      if (task === undefined || task === null) return;
      const reported = await pool.request({
        method: 'PATCH',
        path: `${TASKS_PATH}/${encodeURIComponent(task.id)}`,
        headers: { ...headers, 'content-type': 'application/json' },
        body: result,
      });
      const text = await reported.body.text();
      if (reported.statusCode !== 200)
        throw new Error(`Update task result answered ${reported.statusCode}: ${text}`);
    }
  };
  try {
    return await measureTasks(run.count, async () => {
      await Promise.all(Array.from({ length: run.concurrency }, loop));
    });
  } finally {
    await pool.close();
  }
}

export const TASK_RUNNERS: Record<TaskRunner, (run: TaskRun) => Promise<TasksMeasured>> = {
  kit: runKit,
  undici: runUndici,
};

/** Kit workers with the default poller, one per token, counting the Get task requests they send. */
export class IdleWorkers {
  readonly #workers: ConnectorWorker[];
  #leases = 0;
  readonly #unwatch: () => void;

  constructor(url: string, tokens: readonly string[]) {
    this.#workers = tokens.map((token) => kitWorker(url, token));
    this.#unwatch = watchTaskRequests({
      lease: () => {
        this.#leases += 1;
      },
    });
  }

  async start(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.start()));
  }

  /** Get task requests sent so far, by every worker together. */
  get leases(): number {
    return this.#leases;
  }

  async stop(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.stop()));
    this.#unwatch();
  }
}
