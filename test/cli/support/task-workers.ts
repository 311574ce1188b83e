/**
 * Task-role workers (`connector run` with `CONNECTOR_ROLE=tasks`) sharing the tasks of one system, each a process of
 * its own, against the reference backend in another: the scale-out the Kubernetes tasks Deployment runs. The test of
 * once-only actions and the benchmark of throughput both drive it.
 * @module
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliProcess, putApprovals, spawnCli, startBackendProcess } from './processes.js';

/** What a run of {@link runTaskWorkers} saw. */
export interface TaskWorkersRun {
  /** The result status of each task, by task id, as the service holds it at the end. */
  results: Map<string, string | undefined>;
  /** How many times each task's action ran, by task id, over every worker (from their action records). */
  actions: Map<string, number>;
  /** The exit code of each worker after SIGTERM. */
  exitCodes: (number | null)[];
  /**
   * Tasks completed per second once every worker was running (a worker that starts first takes tasks while the others
   * start): the results recorded from then to the last, over that time.
   */
  tasksPerSecond: number;
}

interface Task {
  id: string;
  status: string;
  completedAt?: string;
  result?: { status: string };
}

const TOKEN = 'task-workers-connector-token';
const LOADING_CONCURRENCY = 16;

/**
 * Creates `tasks` tasks in a fresh backend, runs `workers` task workers until every task has a result, stops them
 * with SIGTERM and reports what happened.
 */
export async function runTaskWorkers(options: {
  tasks: number;
  workers: number;
  /** Tasks each worker runs at once (`poller.concurrency`). */
  concurrency: number;
  /** How long each action takes, in milliseconds: the source's answer, for a worker that waits on it. */
  handlerMs?: number;
  /** The longest wait for every task to finish, in milliseconds. */
  timeoutMs: number;
}): Promise<TaskWorkersRun> {
  const folder = mkdtempSync(join(tmpdir(), 'task-workers-'));
  const backend = await startBackendProcess();
  const workers: CliProcess[] = [];
  try {
    const { system } = await backend.admin<{ system: { id: string } }>('POST', '/tenants', {
      connectorToken: TOKEN,
    });
    const ids = Array.from({ length: options.tasks }, (_, n) => `A-${n}`);
    await putApprovals(backend, TOKEN, ids);
    let next = 0;
    await Promise.all(
      Array.from({ length: LOADING_CONCURRENCY }, async () => {
        while (next < ids.length) {
          const approvalId = ids[next++]!;
          await backend.admin('POST', '/tasks', { systemId: system.id, type: 'approve', approvalId });
        }
      }),
    );

    const config = join(folder, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ poller: { concurrency: options.concurrency, idleMinMs: 10, idleMaxMs: 100 } }),
    );
    for (let n = 0; n < options.workers; n += 1) {
      workers.push(
        spawnCli(['run', 'test/cli/support/worker-module.ts'], {
          APPROVAL_SERVICE_URL: backend.url,
          APPROVAL_CONNECTOR_TOKEN: TOKEN,
          CONNECTOR_ROLE: 'tasks',
          CONNECTOR_CONFIG: config,
          LOG_LEVEL: 'info',
          ACTIONS_FILE: join(folder, `actions-${n}.txt`),
          HANDLER_MS: String(options.handlerMs ?? 0),
        }),
      );
    }

    const deadline = Date.now() + options.timeoutMs;
    let tasks: Task[] = [];
    for (;;) {
      tasks = await backend.admin<Task[]>('GET', `/systems/${system.id}/tasks`);
      if (tasks.every((task) => task.status === 'completed')) break;
      const ended = workers.find((worker) => worker.child.exitCode !== null);
      if (ended !== undefined)
        throw new Error(`a worker exited before the tasks were done:\n${ended.stdout()}`);
      if (Date.now() > deadline) {
        const done = tasks.filter((task) => task.status === 'completed').length;
        throw new Error(`${done} of ${tasks.length} tasks done after ${options.timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    for (const worker of workers) worker.child.kill('SIGTERM');
    const exitCodes = await Promise.all(workers.map((worker) => worker.exited));
    const actions = new Map<string, number>();
    for (let n = 0; n < options.workers; n += 1) {
      let text = '';
      try {
        text = readFileSync(join(folder, `actions-${n}.txt`), 'utf8');
      } catch {
        // This worker ran no action.
      }
      for (const id of text.split('\n').filter(Boolean)) actions.set(id, (actions.get(id) ?? 0) + 1);
    }
    // Both clocks are this machine's: the workers' log lines and the service's completion times.
    const allRunning = Math.max(
      ...workers.map(
        (worker) => worker.lines().find((line) => line.msg === 'connector running')?.time as number,
      ),
    );
    const completed = tasks
      .map((task) => Date.parse(task.completedAt ?? ''))
      .filter((at) => at >= allRunning);
    const spanMs = Math.max(...completed) - allRunning;
    return {
      results: new Map(tasks.map((task) => [task.id, task.result?.status])),
      actions,
      exitCodes,
      tasksPerSecond: completed.length === 0 ? 0 : (completed.length / spanMs) * 1000,
    };
  } finally {
    for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await backend.close();
    rmSync(folder, { recursive: true, force: true });
  }
}
