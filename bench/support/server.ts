import { fileURLToPath } from 'node:url';
import { forkChild } from './ipc.js';

/** Which server a {@link ServerProcess} runs; see `server-process.ts`. */
export type ServerKind = 'reference' | 'bare';

/** What the requests need to know of the server's data. */
export interface ServerFixture {
  /** Opens the Integration API of the reference backend's tenant. */
  connectorToken: string;
  /** Opens the Management API of the organization of users. */
  managementToken: string;
}

/** A system of its own on the reference backend, for one run of a connector. */
export interface BenchSystem {
  systemId: string;
  /** Its connector token. */
  token: string;
}

/** When a task was created and when its result was recorded, on the backend's clock (epoch milliseconds). */
export interface TaskTimes {
  createdAt: number;
  completedAt: number | undefined;
}

/** A server running in a child process. */
export interface ServerProcess {
  /** Its base URL; a {@link reset} changes it. */
  readonly url: string;
  readonly fixture: ServerFixture;
  /** CPU time (user and system) the server process has used so far, in microseconds. */
  cpuMicros(): Promise<number>;
  /** Reference backend only: replaces it with a fresh one, its store empty, so that no run inherits another's data. */
  reset(): Promise<void>;
  /**
   * Reference backend only: a new system whose connector is registered for `approve` tasks, with one approval and
   * `tasks` tasks waiting.
   */
  createSystem(tasks?: number): Promise<BenchSystem>;
  /** Reference backend only: one more task for the system. */
  createTask(systemId: string): Promise<void>;
  /** Reference backend only: the times of every task of the system. */
  taskTimes(systemId: string): Promise<TaskTimes[]>;
  /** Stops the server and waits for its process to end. */
  close(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('./server-process.ts', import.meta.url));

/** Starts `server-process.ts` and waits until it listens. `users` is the size of the organization of users. */
export async function startServerProcess(kind: ServerKind, users = 0): Promise<ServerProcess> {
  const child = await forkChild(SCRIPT, [kind, String(users)]);
  let { url, fixture } = await child.call<{ url: string; fixture: ServerFixture }>(
    'info',
    undefined,
    180_000,
  );
  return {
    get url() {
      return url;
    },
    fixture,
    cpuMicros: () => child.call('cpu'),
    reset: async () => {
      ({ url, fixture } = await child.call<{ url: string; fixture: ServerFixture }>('reset'));
    },
    createSystem: (tasks = 0) => child.call('system', { tasks }),
    createTask: (systemId) => child.call('task', { systemId }),
    taskTimes: (systemId) => child.call('tasks', { systemId }),
    close: () => child.close(),
  };
}
