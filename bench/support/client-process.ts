/**
 * The connector's side of the benchmarks against hand-written loops, run in a process of its own (see `client.ts`)
 * so that its CPU time and its peak memory are its own, and the reference backend it talks to is in another. It
 * answers the calls of `client.ts` (see `ipc.ts`): one measured run (after a warm-up run into another system when
 * asked), or a set of idle workers.
 */
import { serve } from './ipc.js';
import type { Measured } from './measure.js';
import { PUSHERS, type Pusher, type PushRun } from './pushers.js';
import { IdleWorkers, TASK_RUNNERS, type TaskRun, type TaskRunner } from './task-runners.js';

/** A warm-up run into a system of its own, before the measured one: V8 optimizes the path first. */
export interface WarmUp {
  token: string;
  count: number;
}

export interface PushCall extends PushRun {
  pusher: Pusher;
  warmUp?: WarmUp;
}

export interface TaskCall extends TaskRun {
  runner: TaskRunner;
  warmUp?: WarmUp;
}

/** A measured run, and the largest resident set size the process has had in its whole life, in bytes. */
export interface Outcome extends Measured {
  maxRssBytes: number;
}

async function withWarmUp<R extends { token: string; count: number }, M extends Measured>(
  run: R,
  warmUp: WarmUp | undefined,
  go: (run: R) => Promise<M>,
): Promise<M & Outcome> {
  if (warmUp !== undefined) await go({ ...run, ...warmUp });
  const measured = await go(run);
  // maxRSS is in kibibytes.
  return { ...measured, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
}

let idle: IdleWorkers | undefined;

serve(
  {
    push: ({ pusher, warmUp, ...run }: PushCall) => withWarmUp(run, warmUp, PUSHERS[pusher]),
    tasks: ({ runner, warmUp, ...run }: TaskCall) => withWarmUp(run, warmUp, TASK_RUNNERS[runner]),
    idleStart: async ({ url, tokens }: { url: string; tokens: string[] }) => {
      idle = new IdleWorkers(url, tokens);
      await idle.start();
    },
    idleLeases: () => idle?.leases ?? 0,
  },
  () => idle?.stop(),
);
