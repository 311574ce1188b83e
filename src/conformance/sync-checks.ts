/**
 * The sync checks: what the service holds after sync runs, crashes and restarts, against what the source holds.
 * @module
 */
import { type Check, type CheckEnvironment, expectRun, requires, tick } from './check.js';
import { CursorWatch } from './cursor-watch.js';
import { failedRunCheck } from './failed-run.js';
import { sigkillCheck } from './process-check.js';
import { ConformanceFailure } from './report.js';
import { LIFETIMES, type Stage } from './stage.js';
import { syncProperty } from './sync-property.js';
import { isPush } from './wire.js';

/** Says, in a failure, which connector lifetime and which source clock the stage had. */
function inContext(stage: Stage, error: unknown): unknown {
  if (!(error instanceof ConformanceFailure)) return error;
  const lifetime =
    stage.lifetime === 'process'
      ? 'one connector instance across the runs, as in one process'
      : 'a new connector instance for every run, as after a restart';
  const clock =
    stage.clock === undefined || stage.driver.setClock === undefined
      ? ''
      : `, the source's clock ${{ behind: 'a week behind', equal: 'equal to', ahead: 'a week ahead of' }[stage.clock]} the machine's`;
  return new ConformanceFailure(
    `${error.expected} (${lifetime}${clock})`,
    error.happened,
    error.counterexample,
  );
}

/**
 * Plays `scenario` on a stage of each lifetime: one connector instance across every run, where an in-memory cache,
 * a memoized page or a counter lives as long as in production, and a new instance for every run, the restart.
 */
async function underBothLifetimes(
  environment: CheckEnvironment,
  scenario: (stage: Stage) => Promise<void>,
): Promise<void> {
  for (const lifetime of LIFETIMES) {
    const stage = await environment.stage({ lifetime });
    await scenario(stage).catch((error: unknown) => {
      throw inContext(stage, error);
    });
  }
}

/**
 * How many requests a reconciliation or snapshot check holds: under the `process` lifetime, more than any page a
 * connector plausibly asks for (500, or 2.5 times the driver's page size); under `restart`, where the instance is
 * what is checked, two and a half of the driver's pages.
 */
function inventorySize(stage: Stage): number {
  const pages = Math.ceil(2.5 * Math.max(3, stage.driver.pageSize ?? 0));
  return stage.lifetime === 'process' ? Math.max(500, pages) : pages;
}

/**
 * A stage whose source held a large inventory when the connector synced it (pages shorter than asked, when the
 * driver can make them), some of which have since been resolved in the source, and some deleted (when the driver
 * can delete): at the start, in the middle and at the end of the listing, where a connector that stops early misses
 * them. What the next run or reconciliation must show.
 */
async function resolvedAndDeletedAfterASync(environment: CheckEnvironment, stage: Stage): Promise<void> {
  const size = inventorySize(stage);
  const ids: string[] = [];
  for (let index = 0; index < size; index += 1) ids.push(await stage.create(environment.title()));
  stage.driver.shortPages?.(true);
  await expectRun(stage.syncRun(), `the first sync run, over ${size} requests`);
  await environment.expectExact(stage, ` after the first run over ${size} requests`);
  const middle = Math.floor(size / 2);
  for (const index of [0, middle, size - 1]) await stage.driver.resolve(ids[index] ?? '');
  if (stage.driver.delete === undefined) return;
  for (const index of [1, middle + 1, size - 2]) await stage.delete(ids[index] ?? '');
}

export const syncChecks: Check[] = [
  {
    name: 'sync.exact',
    title: 'every request the source holds arrives exactly: data, approver, resolved',
    run: (environment) =>
      underBothLifetimes(environment, async (stage) => {
        const [first, second, third] = [
          await stage.create(environment.title()),
          await stage.create(environment.title()),
          await stage.create(environment.title()),
        ];
        await stage.create(environment.title());
        await stage.driver.change(second, { title: environment.title('Changed') });
        await stage.driver.resolve(third);
        await expectRun(stage.syncRun(), 'the first sync run');
        await environment.expectExact(stage, ' after the first run');
        await stage.driver.change(first, { title: environment.title('Changed') });
        await stage.driver.resolve(second);
        await stage.create(environment.title());
        await expectRun(stage.syncRun(), 'the second sync run');
        await environment.expectExact(stage, ' after a second run, with changes in between');
      }),
  },
  {
    name: 'sync.ties',
    title: 'changes that share one lastModified across page and batch boundaries all arrive',
    run: (environment) =>
      underBothLifetimes(environment, async (stage) => {
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
        await environment.expectExact(
          stage,
          ` after ${tied} requests were created at one instant, in batches of 2`,
        );
        // Again, with a crash right after the first state write of the run: the tie is read again, from its middle.
        await stage.driver.sameInstant?.(async () => {
          for (const id of ids ?? [])
            await stage.driver.change(id, { title: environment.title('Tied again') });
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
        await environment.expectExact(stage, ' after changes at one instant, a crash mid-run and a restart');
      }),
  },
  {
    name: 'sync.during-run',
    title: 'a change made while a run reads or pushes arrives by the next run',
    async run(environment) {
      // Under each source clock, for a driver that can set it: a cursor taken from the machine's clock loses a change
      // made while the connector reads when the source's clock is not ahead of the machine's.
      for (const clock of ['behind', 'equal', 'ahead'] as const) {
        const stage = await environment.stage({ clock });
        await changedWhileReading(environment, stage).catch((error: unknown) => {
          throw inContext(stage, error);
        });
        if (stage.driver.setClock === undefined) return;
      }
    },
  },
  {
    name: 'sync.cursor',
    title: 'the cursor is saved only after the service acknowledged, and never moves back',
    run: (environment) =>
      underBothLifetimes(environment, async (stage) => {
        requires(environment.source.savesCursor, `${environment.source.named} keeps no cursor`);
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
        watch.expectKept('the runs', { written: true });
      }),
  },
  {
    name: 'sync.crash',
    title: 'a crash at any point loses nothing and converges on restart (generated runs, shrunk)',
    run: (environment) => syncProperty(environment),
  },
  sigkillCheck,
  failedRunCheck,
  {
    name: 'sync.snapshot-vanished',
    title: 'for a snapshot source, a request it no longer lists is resolved, however large the listing',
    run: (environment) =>
      underBothLifetimes(environment, async (stage) => {
        requires(environment.source.listsOpenOnly, `the source is ${environment.declared.kind}`);
        await resolvedAndDeletedAfterASync(environment, stage);
        await expectRun(stage.syncRun(), 'the second sync run');
        await environment.expectExact(stage, ' after requests were resolved or deleted in the source');
      }),
  },
  {
    name: 'sync.reconcile',
    title: 'reconciliation resolves what the source resolved (or deleted), however many it looks up',
    run: (environment) =>
      underBothLifetimes(environment, async (stage) => {
        requires(environment.declared.lookup, 'the source has no lookup(): no reconciliation');
        await resolvedAndDeletedAfterASync(environment, stage);
        await expectRun(stage.syncRun({ mode: 'reconcile' }), 'a reconciliation');
        await stage.expectExact('resolved', environment.source.listsOpenOnly, ' after a reconciliation');
      }),
  },
];

/**
 * Changes the source while a run reads it (after the connector's first record, and between two pages of the
 * driver's size) and while it pushes its first batch; the next run must bring every change. With `overlapMs` 0,
 * which stands for a run longer than the overlap window, or a source clock further behind. While an unordered source
 * is read, requests are changed but none created: its cursor is saved at the end of the run, at the latest change it
 * read, so a request created and read during the run would pass over a change made before it to a request already
 * read, which only the overlap window finds again (the kit's answer to that race).
 */
async function changedWhileReading(environment: CheckEnvironment, stage: Stage): Promise<void> {
  const pageSize = stage.driver.pageSize ?? 0;
  const ids: string[] = [];
  for (let index = 0; index < Math.max(4, 2 * pageSize + 2); index += 1) {
    ids.push(await stage.create(environment.title()));
  }
  const options = { sync: { overlapMs: 0 } };
  await expectRun(stage.syncRun({ options }), 'the first sync run');
  for (const id of ids) await stage.driver.change(id, { title: environment.title('Changed') });
  const points = new Set([1, pageSize].filter((count) => count >= 1));
  const made: string[] = [];
  const change = async (what: string, create: boolean) => {
    await tick();
    const id = ids[made.length % ids.length] ?? '';
    await stage.driver.change(id, { title: environment.title(`Changed ${what}`) });
    if (create) await stage.create(environment.title(`Created ${what}`));
    made.push(what);
    await tick();
  };
  let pushed = false;
  stage.onRead = async (kind, count) => {
    if (kind === 'changes' && points.delete(count)) {
      await change(`after record ${count} was read`, environment.declared.ordered);
    }
  };
  try {
    await expectRun(
      stage.syncRun({
        options,
        listener: {
          request: async (request) => {
            if (pushed || !isPush(request)) return;
            pushed = true;
            await change('while the run pushed', true);
          },
        },
      }),
      'a sync run while the source changes',
    );
  } finally {
    stage.onRead = undefined;
  }
  await expectRun(stage.syncRun({ options }), 'the next run');
  await environment.expectExact(
    stage,
    ` after changes made while a run was reading and pushing (${made.join(', ')}), and one more run`,
  );
}
