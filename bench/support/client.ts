import { fileURLToPath } from 'node:url';
import type { Outcome, PushCall, TaskCall } from './client-process.js';
import { forkChild } from './ipc.js';
import type { TasksMeasured } from './task-runners.js';

/** The connector's side in a process of its own, started for one measurement; see `client-process.ts`. */
export interface ClientProcess {
  push(call: PushCall): Promise<Outcome>;
  tasks(call: TaskCall): Promise<Outcome & TasksMeasured>;
  /** Starts a kit worker with the default poller for each token. */
  idleStart(url: string, tokens: readonly string[]): Promise<void>;
  /** Get task requests the idle workers have sent so far, all together. */
  idleLeases(): Promise<number>;
  /** Stops what runs in it and waits for the process to end. */
  close(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('./client-process.ts', import.meta.url));

/**
 * How the connector's process traces: `default`, as the kit's repository has it (the OpenTelemetry API installed,
 * no SDK registered); `no-api`, as a project without `@opentelemetry/api` (its import fails); `sdk`, an SDK
 * registered that records every span and drops it at export.
 */
export type Tracing = 'default' | 'no-api' | 'sdk';

const TRACING_SETUP: Record<Tracing, readonly string[]> = {
  default: [],
  'no-api': ['--import', fileURLToPath(new URL('./without-otel-api.ts', import.meta.url))],
  sdk: ['--import', fileURLToPath(new URL('./otel-sdk.ts', import.meta.url))],
};

export async function startClientProcess(tracing: Tracing = 'default'): Promise<ClientProcess> {
  const child = await forkChild(SCRIPT, [], TRACING_SETUP[tracing]);
  return {
    push: (call) => child.call('push', call),
    tasks: (call) => child.call('tasks', call),
    idleStart: (url, tokens) => child.call('idleStart', { url, tokens }),
    idleLeases: () => child.call('idleLeases'),
    close: () => child.close(),
  };
}

/** Runs `work` with a client process of its own, closed after. */
export async function inClientProcess<T>(
  work: (client: ClientProcess) => Promise<T>,
  tracing: Tracing = 'default',
): Promise<T> {
  const client = await startClientProcess(tracing);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}
