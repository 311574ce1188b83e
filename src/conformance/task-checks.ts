/**
 * The task checks, run for every declared task type: a task created as an approver's action would be, carried out
 * by a worker whose handlers the battery watches, with the source failing as the driver can make it fail.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { TaskResultStatus } from '../api/index.js';
import { IntegrationClient } from '../client/index.js';
import { HarnessTimeoutError } from '../testing/index.js';
import { type Check, requires } from './check.js';
import type { SourceFailure } from './driver.js';
import { ConformanceFailure } from './report.js';
import { QUICK_SHUTDOWN } from './stage.js';
import { bench, type FailurePlan, show, type TaskBench } from './task-bench.js';

/** The status the failure table (docs/failure-mapping.md) documents for a handler failing each way. */
export const FAILURE_STATUS: Readonly<Record<SourceFailure, TaskResultStatus>> = {
  unavailable: 'serviceUnavailable',
  rateLimited: 'serviceUnavailable',
  unreachable: 'serviceUnavailable',
  unauthorized: 'authenticationError',
  forbidden: 'authenticationError',
  refused: 'systemError',
  hang: 'serviceUnavailable',
  slow: 'serviceUnavailable',
};

/** How long after a task's deadline its handler may take to give up, in milliseconds. */
const SETTLE_BOUND_MS = 2_000;

/** A task's deadline in the deadline check, in milliseconds. */
const DEADLINE_MS = 300;

/** How long a `slow` call of the deadline check takes: well past the deadline, within the settle bound. */
const SLOW_MS = DEADLINE_MS + 500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a failure plan strikes, in words. */
function whereItStrikes(plan: FailurePlan): string {
  return plan.operation === 'action'
    ? `${plan.failure} in the action, after a pre-check that passed`
    : `${plan.failure} in the pre-check's read`;
}

/** Whether the source was acted on since `before` (by `actions()`, else by the request's record). */
async function actedSince(tasks: TaskBench, id: string, before: { actions?: number; record: unknown }) {
  return before.actions !== undefined
    ? (await tasks.actions(id)) !== before.actions
    : !isDeepStrictEqual(await tasks.record(id), before.record);
}

async function before(tasks: TaskBench, id: string) {
  const actions = await tasks.actions(id);
  return { ...(actions === undefined ? {} : { actions }), record: await tasks.record(id) };
}

export const taskChecks: Check[] = [
  {
    name: 'tasks.success',
    title: 'a task on an open request runs its handler once and succeeds',
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      const [id = ''] = await tasks.requests(environment, 1);
      const before = await tasks.actions(id);
      await tasks.worker();
      const taskId = tasks.createTask(id);
      const result = await tasks.result(taskId);
      if (result.status !== 'success') {
        throw new ConformanceFailure('success', show(result));
      }
      const runs = tasks.runsOf(taskId).length;
      if (runs !== 1) throw new ConformanceFailure('the handler to run once', `it ran ${runs} times`);
      const after = await tasks.actions(id);
      if (before !== undefined && after !== before + 1) {
        throw new ConformanceFailure(
          'the source to record one action',
          `it recorded ${(after ?? 0) - before}`,
        );
      }
    },
  },
  {
    name: 'tasks.invalid-data',
    title:
      "data that breaks the task type's schema ends internalError with task_data_invalid; the handler never runs",
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      const [id = ''] = await tasks.requests(environment, 1);
      // A bare approval: no data the connector would have pushed.
      const bare = `conformance-bare-${Math.floor(environment.random() * 1e9).toString(36)}`;
      const client = new IntegrationClient(tasks.stage.harness.serviceOptions());
      const approver = tasks.stage.approvers[0] ?? 'conformance-approver';
      await client
        .putApprovals([
          {
            id: bare,
            schemaId: 'conformance-bare',
            approver,
            resolved: false,
            lastModified: new Date(),
            data: {},
          },
        ])
        .finally(() => client.close());
      await tasks.worker();
      const declared = tasks.declaration();
      for (const [approvalId, comments] of [
        [id, ''],
        [bare, ''],
        [bare, 'x'.repeat(70_000)],
      ] as const) {
        const taskId = tasks.createTask(approvalId, comments);
        const result = await tasks.result(taskId);
        const data = tasks.delivered.get(taskId);
        if (declared === undefined || data === undefined || declared.input.safeParse(data).success) continue;
        if (result.status !== 'internalError' || result.meta?.code !== 'task_data_invalid') {
          throw new ConformanceFailure('internalError with meta.code task_data_invalid', show(result));
        }
        if (tasks.runsOf(taskId).length > 0) {
          throw new ConformanceFailure('the handler never to run on invalid data', 'it ran');
        }
        return;
      }
      requires(false, "no task data the service can send breaks this task type's schema");
    },
  },
  {
    name: 'tasks.failures',
    title:
      'each failure the driver can provoke, in the action after a passing pre-check and in the pre-check, lands in its documented status',
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      const failures = (tasks.stage.driver.failures ?? []).filter(
        (failure) => failure !== 'hang' && failure !== 'slow',
      );
      requires(
        tasks.stage.driver.fail !== undefined && failures.length > 0,
        'the driver provokes no failures (fail() and failures)',
      );
      const prechecked = tasks.declaration()?.precheck !== undefined;
      const plans: FailurePlan[] = failures.flatMap((failure) => [
        { failure, operation: 'action' as const },
        ...(prechecked ? [{ failure, operation: 'precheck' as const }] : []),
      ]);
      const ids = await tasks.requests(environment, plans.length);
      await tasks.worker();
      const wrong: string[] = [];
      try {
        for (const [index, plan] of plans.entries()) {
          const id = ids[index] ?? '';
          const was = await before(tasks, id);
          const taskId = tasks.createTask(id);
          tasks.plan(taskId, plan);
          const result = await tasks.result(taskId);
          const expected = FAILURE_STATUS[plan.failure];
          if (result.status !== expected) {
            wrong.push(`${whereItStrikes(plan)}: expected ${expected}, got ${show(result)}`);
          } else if (plan.operation === 'precheck' && (await actedSince(tasks, id, was))) {
            wrong.push(`${whereItStrikes(plan)}: the handler acted on the source all the same`);
          }
        }
      } finally {
        await tasks.restoreAll();
      }
      if (wrong.length > 0) {
        throw new ConformanceFailure('each failure in its documented status', wrong.join('; '));
      }
    },
  },
  {
    name: 'tasks.precheck',
    title:
      "a task on a request the source has resolved since does not act on it, and a pre-check's verdict is reported",
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      const [id = ''] = await tasks.requests(environment, 1);
      await tasks.stage.driver.resolve(id);
      const [record, actions] = [await tasks.record(id), await tasks.actions(id)];
      await tasks.worker();
      const taskId = tasks.createTask(id);
      const result = await tasks.result(taskId);
      const verdict = tasks.calls.find((call) => call.kind === 'precheck' && call.taskId === taskId)?.verdict;
      if (verdict !== undefined && verdict !== true) {
        if (!isDeepStrictEqual(result, verdict)) {
          throw new ConformanceFailure(`the pre-check's verdict ${show(verdict)} reported`, show(result));
        }
        if (tasks.runsOf(taskId).length > 0) {
          throw new ConformanceFailure('the handler not to run after a verdict', 'it ran');
        }
      }
      const acted =
        actions !== undefined
          ? (await tasks.actions(id)) !== actions
          : !isDeepStrictEqual(await tasks.record(id), record);
      // A pre-check may find the very decision the task asks for already taken (an earlier delivery, or the
      // approver in the source itself) and end the task `success` without acting: its verdict, reported above.
      const decidedByPrecheck = verdict !== undefined && verdict !== true;
      if (acted || (result.status === 'success' && !decidedByPrecheck)) {
        throw new ConformanceFailure(
          "no action on a request already resolved in the source, and a result other than success (unless a pre-check's verdict)",
          `${acted ? 'the source was acted on' : 'the source was left alone'}, and the task ended ${show(result)}`,
        );
      }
    },
  },
  {
    name: 'tasks.idempotent',
    title: 'a task delivered again after a crash does not act twice in the source (idempotencyKey)',
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      requires(
        tasks.stage.driver.actions !== undefined,
        'the driver has no actions(): it cannot count actions',
      );
      const [id = ''] = await tasks.requests(environment, 1);
      const before = (await tasks.actions(id)) ?? 0;
      // The first worker carries the task out and dies before its result reaches the service.
      const first = await tasks.worker(
        {},
        (path, method) => path.startsWith('/v2/connector/tasks/') && method !== 'GET',
      );
      const taskId = tasks.createTask(id);
      await first.wire.crashed;
      await tasks.stage.stop(first);
      await first.wire.idle();
      tasks.stage.harness.backend.expireLeases({ taskId });
      await tasks.worker();
      const result = await tasks.result(taskId);
      const runs = tasks.runsOf(taskId).length;
      const actions = ((await tasks.actions(id)) ?? 0) - before;
      if (actions !== 1) {
        throw new ConformanceFailure(
          'one action in the source for a task delivered twice',
          `${actions} actions (the handler ran ${runs} times; the task ended ${show(result)})`,
        );
      }
    },
  },
  {
    name: 'tasks.credentials',
    title: 'sealed credentials reach the handler, and appear in no log line, state or result',
    perTaskType: true,
    async run(environment, type) {
      requires(environment.declared.authRequired, 'the connector has no authRequired');
      const tasks = await bench(environment, type);
      const [id = ''] = await tasks.requests(environment, 2);
      await tasks.worker();
      const taskId = tasks.createTask(id);
      const result = await tasks.result(taskId);
      const approver = tasks.stage.harness.approvals().find((held) => held.id === id)?.approver ?? '';
      const credentials = tasks.credentials(approver);
      const run = tasks.runsOf(taskId)[0];
      const checked = tasks.calls.find((call) => call.taskId === taskId);
      if (checked === undefined) {
        throw new ConformanceFailure(
          'the pre-check or the handler to run',
          `neither ran; the task ended ${show(result)}`,
        );
      }
      if (run !== undefined && !isDeepStrictEqual(run.credentials, credentials)) {
        throw new ConformanceFailure(
          `the handler to get the credentials with the fields ${Object.keys(credentials).join(', ')}`,
          `it got ${run.credentials === undefined ? 'none' : `the fields ${Object.keys(run.credentials).join(', ')}, not all matching`}`,
        );
      }
      // A failing task, too: an error message is where a secret most often slips out.
      const restore = tasks.stage.driver.failures?.includes('unauthorized')
        ? await tasks.stage.driver.fail?.('unauthorized', { operation: 'any', times: 'until-restored' })
        : undefined;
      const failing = tasks.createTask([...tasks.stage.created][1] ?? id);
      const failed = await tasks.result(failing);
      await restore?.();
      const places = {
        'a log line': tasks.logs.join('\n'),
        'the connector state': JSON.stringify(tasks.stage.harness.state().state),
        'a task result': JSON.stringify([result, failed]),
      };
      for (const [place, text] of Object.entries(places)) {
        for (const [field, value] of Object.entries(credentials)) {
          if (value.length >= 4 && text.includes(value)) {
            throw new ConformanceFailure(
              `no credential value in ${place}`,
              `the value of "${field}" is in ${place}`,
            );
          }
        }
      }
    },
  },
  {
    name: 'tasks.deadline',
    title:
      "a handler whose source hangs or is slow ends serviceUnavailable at the task's deadline, stops waiting, and does not act late",
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      const can = tasks.stage.driver.failures ?? [];
      requires(
        tasks.stage.driver.fail !== undefined && (can.includes('hang') || can.includes('slow')),
        "the driver cannot make the source hang or slow (failures: ['hang', 'slow'])",
      );
      const plans: FailurePlan[] = [
        ...(can.includes('hang') ? [{ failure: 'hang' as const, operation: 'action' as const }] : []),
        ...(can.includes('hang') && tasks.declaration()?.precheck !== undefined
          ? [{ failure: 'hang' as const, operation: 'precheck' as const }]
          : []),
        ...(can.includes('slow')
          ? [{ failure: 'slow' as const, operation: 'action' as const, delayMs: SLOW_MS }]
          : []),
      ];
      const ids = await tasks.requests(environment, plans.length);
      // A handler still waiting when the worker stops is the bug this check reports: the stop need not wait for it.
      await tasks.worker({ poller: { timeoutMs: DEADLINE_MS }, shutdown: QUICK_SHUTDOWN });
      try {
        // One after the other: a failure is switched on for a whole operation of the source, not for one task.
        for (const [index, plan] of plans.entries()) await deadline(tasks, ids[index] ?? '', plan);
      } finally {
        await tasks.restoreAll();
      }
    },
  },
];

/** One task of the deadline check: the source hangs, or answers slowly, where `plan` says. */
async function deadline(tasks: TaskBench, id: string, plan: FailurePlan): Promise<void> {
  const was = await before(tasks, id);
  const startedAt = performance.now();
  const taskId = tasks.createTask(id);
  tasks.plan(taskId, plan);
  const where = whereItStrikes(plan);
  const result = await tasks.result(taskId, DEADLINE_MS + SETTLE_BOUND_MS).catch((error: unknown) => {
    if (!(error instanceof HarnessTimeoutError)) throw error;
    throw new ConformanceFailure(
      `serviceUnavailable with meta.code TimeoutError at the deadline (${where})`,
      `no result ${SETTLE_BOUND_MS / 1000} s after the deadline: the handler is still waiting on the source; pass context.signal to its calls`,
    );
  });
  if (result.status !== 'serviceUnavailable' || result.meta?.code !== 'TimeoutError') {
    throw new ConformanceFailure(
      `serviceUnavailable with meta.code TimeoutError (${where})`,
      result.status === 'success'
        ? `success, reported after the deadline: the handler ignored context.signal and carried the decision out late`
        : show(result),
    );
  }
  // A handler that passes the signal on settles as it is aborted, before its result is reported; the bound is only
  // there so that a loaded machine is not taken for a handler that hangs.
  const calls = tasks.calls.filter((call) => call.taskId === taskId);
  for (let waited = 0; waited < SETTLE_BOUND_MS && calls.some((call) => !call.settled); waited += 50) {
    await sleep(50);
  }
  if (calls.some((call) => !call.settled)) {
    throw new ConformanceFailure(
      `the handler to give up once the task's signal aborted (${where})`,
      `it was still waiting ${SETTLE_BOUND_MS / 1000} s after the deadline: pass context.signal to the source's calls`,
    );
  }
  // A slow call that was not aborted carries the decision out when it answers: after the kit reported the task
  // failed, so the approver acts again on a request the source has decided.
  if (plan.failure === 'slow') {
    await sleep(Math.max(0, startedAt + (plan.delayMs ?? 0) + 200 - performance.now()));
    if (await actedSince(tasks, id, was)) {
      throw new ConformanceFailure(
        `no action in the source after the task was reported failed at its deadline (${where})`,
        'the source carried the decision out after the deadline: the call was not given context.signal',
      );
    }
  }
}
