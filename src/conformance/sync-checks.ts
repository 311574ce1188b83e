/**
 * The sync checks: what the service holds after sync runs, crashes and restarts, against what the source holds.
 * @module
 */
import { type Check, type CheckEnvironment, expectRun, requires } from './check.js';
import { CursorWatch } from './cursor-watch.js';
import { sigkillCheck } from './process-check.js';
import { ConformanceFailure } from './report.js';
import type { Stage } from './stage.js';
import { syncProperty } from './sync-property.js';
import type { WireRequest } from './wire.js';

const APPROVALS_PATH = '/v2/rawapprovals';

function deletedMeans(environment: CheckEnvironment): 'resolved' | 'any' {
  return environment.declared.kind === 'snapshot' ? 'resolved' : 'any';
}

/**
 * A stage whose source held three requests when the connector synced them, one of which has since been resolved in
 * the source and one deleted (when the driver can delete): what the next run or reconciliation must show.
 */
async function resolvedAndDeletedAfterASync(environment: CheckEnvironment): Promise<Stage> {
  const stage = await environment.stage();
  const resolved = await stage.create(environment.title());
  const deleted = await stage.create(environment.title());
  await stage.create(environment.title());
  await expectRun(stage.syncRun(), 'the first sync run');
  await stage.driver.resolve(resolved);
  if (stage.driver.delete !== undefined) await stage.delete(deleted);
  return stage;
}

async function exact(environment: CheckEnvironment, stage: Stage, context: string): Promise<void> {
  await stage.expectExact(deletedMeans(environment), environment.declared.kind === 'snapshot', context);
}

const isPush = (request: WireRequest) => request.path === APPROVALS_PATH && request.method !== 'GET';

export const syncChecks: Check[] = [
  {
    name: 'sync.exact',
    title: 'every request the source holds arrives exactly: data, approver, resolved',
    async run(environment) {
      const stage = await environment.stage();
      const [first, second, third] = [
        await stage.create(environment.title()),
        await stage.create(environment.title()),
        await stage.create(environment.title()),
      ];
      await stage.create(environment.title());
      await stage.driver.change(second, { title: environment.title('Changed') });
      await stage.driver.resolve(third);
      await expectRun(stage.syncRun(), 'the first sync run');
      await exact(environment, stage, ' after the first run');
      await stage.driver.change(first, { title: environment.title('Changed') });
      await stage.driver.resolve(second);
      await stage.create(environment.title());
      await expectRun(stage.syncRun(), 'the second sync run');
      await exact(environment, stage, ' after a second run, with changes in between');
    },
  },
  {
    name: 'sync.ties',
    title: 'changes that share one lastModified across page and batch boundaries all arrive',
    async run(environment) {
      const stage = await environment.stage();
      requires(
        stage.driver.sameInstant,
        'the driver has no sameInstant(): it cannot make changes share one lastModified',
      );
      const tied = 2 * Math.max(3, stage.driver.pageSize ?? 0) + 1;
      const batch = { sync: { batchSize: 2, overlapMs: 0 } };
      await stage.create(environment.title());
      await expectRun(stage.syncRun({ options: batch }), 'the first sync run');
      const ids = await stage.driver.sameInstant?.(async () => {
        const created: string[] = [];
        for (let index = 0; index < tied; index += 1)
          created.push(await stage.create(environment.title('Tied')));
        return created;
      });
      await expectRun(
        stage.syncRun({ options: batch }),
        `a sync run over ${tied} requests created at one instant`,
      );
      await exact(environment, stage, ` after ${tied} requests were created at one instant, in batches of 2`);
      // Again, with a crash right after the first state write of the run: the tie is read again, from its middle.
      await stage.driver.sameInstant?.(async () => {
        for (const id of ids ?? []) await stage.driver.change(id, { title: environment.title('Tied again') });
        for (let index = 0; index < tied; index += 1) await stage.create(environment.title('Tied'));
      });
      await stage.syncRun({
        options: batch,
        listener: {
          response: (request, _status, _body, wire) => {
            if (request.method === 'PUT' && request.path === '/v2/connector/state') wire.cut();
          },
        },
      });
      await expectRun(stage.syncRun({ options: batch }), 'the run after a crash in the middle of a tie');
      await exact(environment, stage, ' after changes at one instant, a crash mid-run and a restart');
    },
  },
  {
    name: 'sync.during-run',
    title: 'a change made during a run arrives by the next run',
    async run(environment) {
      const stage = await environment.stage();
      const first = await stage.create(environment.title());
      await stage.create(environment.title());
      let changed = false;
      await expectRun(
        stage.syncRun({
          listener: {
            request: async (request) => {
              if (changed || !isPush(request)) return;
              changed = true;
              await stage.driver.change(first, { title: environment.title('Changed during a run') });
              await stage.create(environment.title('Created during a run'));
            },
          },
        }),
      );
      if (!changed) throw new ConformanceFailure('the run to push the requests', 'it pushed nothing');
      await expectRun(stage.syncRun(), 'the next run');
      await exact(environment, stage, ' after a change made while a run was pushing, and one more run');
    },
  },
  {
    name: 'sync.cursor',
    title: 'the cursor is saved only after the service acknowledged, and never moves back',
    async run(environment) {
      requires(environment.declared.kind === 'incremental', 'a snapshot source keeps no cursor');
      const stage = await environment.stage();
      const watch = new CursorWatch(stage);
      const options = { sync: { batchSize: 2 } };
      for (let index = 0; index < 5; index += 1) await stage.create(environment.title());
      await expectRun(stage.syncRun({ listener: watch.listener(), options }));
      const ids = [...stage.created];
      await stage.driver.change(ids[0] ?? '', { title: environment.title('Changed') });
      await stage.driver.resolve(ids[1] ?? '');
      await stage.create(environment.title());
      await expectRun(stage.syncRun({ listener: watch.listener(), options }), 'the second run');
      await expectRun(stage.syncRun({ listener: watch.listener(), options }), 'a run with nothing new');
      if (watch.writes === 0) {
        throw new ConformanceFailure('the runs to save a cursor', 'no state write carried one');
      }
      if (watch.violations.length > 0) {
        throw new ConformanceFailure(
          'every saved cursor to be at or after the last, and everything at or before it acknowledged',
          watch.violations.slice(0, 3).join('; '),
        );
      }
    },
  },
  {
    name: 'sync.crash',
    title: 'a crash at any point loses nothing and converges on restart (generated runs, shrunk)',
    run: (environment) => syncProperty(environment),
  },
  sigkillCheck,
  {
    name: 'sync.snapshot-vanished',
    title: 'for a snapshot source, a request it no longer lists is resolved',
    async run(environment) {
      requires(environment.declared.kind === 'snapshot', 'the source is incremental');
      const stage = await resolvedAndDeletedAfterASync(environment);
      await expectRun(stage.syncRun(), 'the second sync run');
      await exact(environment, stage, ' after requests were resolved or deleted in the source');
    },
  },
  {
    name: 'sync.reconcile',
    title: 'reconciliation resolves what the source resolved (or deleted)',
    async run(environment) {
      requires(environment.declared.lookup, 'the source has no lookup(): no reconciliation');
      const stage = await resolvedAndDeletedAfterASync(environment);
      await expectRun(stage.syncRun({ mode: 'reconcile' }), 'a reconciliation');
      await stage.expectExact(
        'resolved',
        environment.declared.kind === 'snapshot',
        ' after a reconciliation',
      );
    },
  },
];
