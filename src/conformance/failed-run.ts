/**
 * `sync.failed-run`: a sync run or a reconciliation while the source fails must fail, and resolve nothing it did not
 * read; and after runs that failed (the source failing mid-read, the service refusing what was read), nothing is
 * lost on the same connector instance, where what the connector keeps in memory outlives the failed run.
 * @module
 */
import { type Check, type CheckEnvironment, expectRun, requires } from './check.js';
import type { SourceFailure, SourceOperation } from './driver.js';
import { ConformanceFailure } from './report.js';
import type { Stage } from './stage.js';
import { FAILURE_STATUS } from './task-checks.js';
import { isPush } from './wire.js';

/** The failures a sync run can meet from a source that answers: a hang or a slow answer is a task check's. */
function syncFailures(stage: Stage): SourceFailure[] {
  return (stage.driver.failures ?? []).filter((failure) => failure !== 'hang' && failure !== 'slow');
}

/** Every approval the service holds resolved while the source still holds it open. */
async function resolvedWhileOpen(stage: Stage): Promise<string[]> {
  const open = new Set((await stage.driver.holds()).filter((held) => !held.resolved).map((held) => held.id));
  return stage.harness
    .approvals()
    .filter((approval) => approval.resolved && open.has(approval.id))
    .map((approval) => JSON.stringify(approval.id));
}

/** A run (or reconciliation) while `operation` fails `failure` on every call: it must fail and resolve nothing. */
async function runWhileFailing(
  stage: Stage,
  failure: SourceFailure,
  operation: SourceOperation,
): Promise<void> {
  const mode = operation === 'lookup' ? 'reconcile' : 'sync';
  const what = `a ${mode === 'sync' ? 'sync run' : 'reconciliation'} while every ${operation === 'lookup' ? 'lookup' : 'read of the changes'} fails (${failure})`;
  const restore = await stage.driver.fail?.(failure, { operation, times: 'until-restored' });
  let run: { error?: unknown };
  try {
    run = await stage.syncRun({ mode });
  } finally {
    await restore?.();
  }
  const wrong = await resolvedWhileOpen(stage);
  if (wrong.length > 0) {
    throw new ConformanceFailure(
      `${what} to resolve nothing the source holds open`,
      `it resolved ${wrong.slice(0, 3).join(', ')}${wrong.length > 3 ? ` and ${wrong.length - 3} more` : ''}: a failed read was taken for a source without them`,
    );
  }
  if (run.error === undefined) {
    throw new ConformanceFailure(
      `${what} to fail, so that the operator sees the outage`,
      'it succeeded: the failure was swallowed',
    );
  }
}

/** The service's answer to every push of a run that the service refuses: an outage, as the envelope says one. */
const OUTAGE = { status: 503, body: { status: 'failure' } };

/** The client's retries in a run the service refuses: one, at once, so that the run fails in milliseconds. */
const QUICK_CLIENT_RETRY = { retries: 1, baseDelayMs: 1, maxDelayMs: 2 };

export const failedRunCheck: Check = {
  name: 'sync.failed-run',
  title:
    'a run while the source fails fails and resolves nothing it did not read; after failed runs, nothing is lost',
  async run(environment: CheckEnvironment) {
    const stage = await environment.stage({ lifetime: 'process' });
    const failures = syncFailures(stage);
    const pages = 2 * Math.max(3, stage.driver.pageSize ?? 0) + 1;
    for (let index = 0; index < pages; index += 1) await stage.create(environment.title());
    await expectRun(stage.syncRun(), 'the first sync run');
    // The service refuses every push of a run, after the connector read the changes: the run fails, and the next
    // run, on the same instance, must read them again.
    for (const id of [...stage.created])
      await stage.driver.change(id, { title: environment.title('Changed') });
    await stage.syncRun({
      service: { retry: QUICK_CLIENT_RETRY },
      listener: { request: (request) => (isPush(request) ? OUTAGE : undefined) },
    });
    await expectRun(stage.syncRun(), 'a sync run after a run whose pushes the service refused');
    await environment.expectExact(stage, ' after a run whose pushes the service refused, and one more run');
    requires(
      stage.driver.fail !== undefined && failures.length > 0,
      'the driver provokes no failures (fail() and failures): only the refused run was checked',
    );
    for (const failure of failures) {
      await runWhileFailing(stage, failure, 'changes');
      if (environment.declared.lookup) await runWhileFailing(stage, failure, 'lookup');
    }
    // The source fails once after the connector's first record, then answers again: on the same instance, what the
    // connector read before the failure and the service never acknowledged must still arrive.
    const transient =
      failures.find((failure) => FAILURE_STATUS[failure] === 'serviceUnavailable') ?? failures[0];
    for (const id of [...stage.created])
      await stage.driver.change(id, { title: environment.title('Changed') });
    let restore: (() => void | Promise<void>) | undefined;
    stage.onRead = async (kind, count) => {
      if (kind !== 'changes' || count !== 1 || restore !== undefined || transient === undefined) return;
      restore = await stage.driver.fail?.(transient, { operation: 'changes', times: 1 });
    };
    try {
      await stage.syncRun();
    } finally {
      stage.onRead = undefined;
      await restore?.();
    }
    await expectRun(stage.syncRun(), 'a sync run once the source answers again');
    await environment.expectExact(
      stage,
      ` after runs while the source failed (${failures.join(', ')}), on one connector instance, and a run once it answered again`,
    );
  },
};
