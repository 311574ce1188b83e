import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Which server a {@link ServerProcess} runs; see `server-process.ts`. */
export type ServerKind = 'reference' | 'bare';

/** What the requests need to know of the server's data. */
export interface ServerFixture {
  /** Opens the Integration API of the reference backend's tenant. */
  connectorToken: string;
  /** Opens the Management API of the organization of users. */
  managementToken: string;
}

export type ToServer = { type: 'cpu' } | { type: 'close' };
export type ToParent =
  | { type: 'ready'; url: string; fixture: ServerFixture }
  | { type: 'cpu'; micros: number };

/** A server running in a child process. */
export interface ServerProcess {
  readonly url: string;
  readonly fixture: ServerFixture;
  /** CPU time (user and system) the server process has used so far, in microseconds. */
  cpuMicros(): Promise<number>;
  /** Stops the server and waits for its process to end. */
  close(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('./server-process.ts', import.meta.url));

/** Waits for the next message of one type, failing if the process exits or `timeoutMs` passes first. */
function next<T extends ToParent['type']>(
  child: ChildProcess,
  type: T,
  timeoutMs: number,
): Promise<Extract<ToParent, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ToParent) => {
      if (message.type !== type) return;
      done();
      resolve(message as Extract<ToParent, { type: T }>);
    };
    const onExit = (code: number | null) => {
      done();
      reject(new Error(`the ${type} message never came: the server process exited with ${code}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the ${type} message never came within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/**
 * Forks `server-process.ts` with this process's Node flags (so `--import tsx` carries over) and waits until it
 * listens. `users` is the size of the reference backend's organization of users.
 */
export async function startServerProcess(kind: ServerKind, users = 0): Promise<ServerProcess> {
  const child = fork(SCRIPT, [kind, String(users)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let ready: Extract<ToParent, { type: 'ready' }>;
  try {
    ready = await next(child, 'ready', 180_000);
  } catch (error) {
    child.kill();
    throw error;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: ready.url,
    fixture: ready.fixture,
    cpuMicros: async () => {
      const answer = next(child, 'cpu', 10_000);
      child.send({ type: 'cpu' } satisfies ToServer);
      return (await answer).micros;
    },
    close: async () => {
      if (child.exitCode !== null) return;
      child.send({ type: 'close' } satisfies ToServer);
      const timer = setTimeout(() => child.kill(), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
