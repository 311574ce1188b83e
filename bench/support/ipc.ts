/**
 * Calls between the benchmark's process and the processes it forks (a server, a connector), over Node's IPC
 * channel: each request carries an id, and its answer (or the error its handler threw) comes back with that id.
 */
import { type ChildProcess, fork } from 'node:child_process';

interface Request {
  id: number;
  method: string;
  args: unknown;
}

type Reply =
  | { type: 'ready' }
  | { type: 'answer'; id: number; value: unknown }
  | { type: 'error'; id: number; message: string };

/** A forked process that answers calls. */
export interface Child {
  /** Calls `method` in the child with `args` and resolves with what its handler returned. */
  call<T>(method: string, args?: unknown, timeoutMs?: number): Promise<T>;
  /** Calls `close` in the child, which ends it, and waits for it to exit; kills it if it does not within 10 s. */
  close(): Promise<void>;
}

/**
 * Forks `script` with this process's Node flags (so `--import tsx` carries over), and `execArgv` after them, and waits
 * until it is ready, that is until it has called {@link serve}.
 */
export async function forkChild(
  script: string,
  args: readonly string[] = [],
  execArgv: readonly string[] = [],
): Promise<Child> {
  const child = fork(script, args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, ...execArgv],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let nextId = 0;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let ready: () => void = () => {};
  const isReady = new Promise<void>((resolve) => {
    ready = resolve;
  });
  child.on('message', (reply: Reply) => {
    if (reply.type === 'ready') return ready();
    const call = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.type === 'answer') call?.resolve(reply.value);
    else call?.reject(new Error(reply.message));
  });
  void exited.then((code) => {
    for (const call of pending.values()) call.reject(new Error(`the child process exited with ${code}`));
    pending.clear();
  });
  const started = await Promise.race([isReady.then(() => true), exited.then(() => false)]);
  if (!started) throw new Error(`${script} exited before it was ready`);
  const call = <T>(method: string, args?: unknown, timeoutMs = 30 * 60_000): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${method} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      child.send({ id, method, args } satisfies Request);
    });
  return { call, close: () => closeChild(child, exited, call) };
}

async function closeChild(
  child: ChildProcess,
  exited: Promise<number | null>,
  call: Child['call'],
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  // The child exits as it answers, so the answer may never come: the exit is what is waited for.
  call('close').catch(() => {});
  await exited;
  clearTimeout(timer);
}

/**
 * The child's side: answers each call with its handler, and `close` by running `onClose` and exiting. The child also
 * exits when the parent goes, so that an orphan never keeps a port or the CPU.
 */
export function serve(
  handlers: Record<string, (args: never) => unknown>,
  onClose: () => Promise<void> | void = () => {},
): void {
  const reply = (message: Reply) => process.send?.(message);
  process.on('message', async ({ id, method, args }: Request) => {
    if (method === 'close') {
      await onClose();
      process.exit(0);
    }
    const handler = handlers[method];
    try {
      if (handler === undefined) throw new Error(`no handler for ${method}`);
      reply({ type: 'answer', id, value: await handler(args as never) });
    } catch (error) {
      reply({
        type: 'error',
        id,
        message: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
  });
  process.on('disconnect', () => process.exit(0));
  reply({ type: 'ready' });
}
