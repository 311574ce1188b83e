/**
 * The push checks: a connector's push path, fed with the deliveries its source makes, which the battery passes on
 * to the worker the way a network and an attacker do: the same one three times, two out of order after the source
 * has moved on, one never, forged ones, and some about requests the source no longer has. An event is a hint: what
 * the service shows must be what the source holds, each time.
 * @module
 */
import { type Check, requires, tick } from './check.js';
import type { HeldDelivery } from './push-relay.js';
import { PushStage } from './push-stage.js';
import { ConformanceFailure } from './report.js';
import { summarize } from './stage.js';

/** Requests created and synced by a first run, their deliveries dropped: where each push check starts. */
async function synced(push: PushStage, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    ids.push(await push.stage.create(push.environment.title()));
  }
  await push.sync('the first sync run');
  await push.discard();
  return ids;
}

/** Makes a change in the source, a tick after the last one, and answers the deliveries the source made for it. */
async function deliveriesOf(
  push: PushStage,
  what: string,
  change: () => unknown,
  none: 'allowed' | 'error' = 'error',
): Promise<HeldDelivery[]> {
  await tick();
  await change();
  return push.deliveries(what, none);
}

/** The forgeries the battery makes of genuine deliveries, without knowing how the source signs. */
function forgeriesOf(first: HeldDelivery, second: HeldDelivery): { name: string; delivery: HeldDelivery }[] {
  const contentType = first.headers['content-type'];
  const unsigned: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
  const forged = [
    {
      name: 'unsigned (the body without any of its headers)',
      delivery: { body: first.body, headers: unsigned },
    },
    {
      name: 'tampered (a byte added to the body after it was signed)',
      delivery: { body: Buffer.concat([first.body, Buffer.from('\n')]), headers: first.headers },
    },
  ];
  if (!first.body.equals(second.body)) {
    forged.push({
      name: "swapped (a body under another delivery's headers, signature included)",
      delivery: { body: second.body, headers: first.headers },
    });
  }
  return forged;
}

/** The lookup delay of `push.gone`, within which its deliveries all come. */
const LOOKED_UP_TOGETHER_MS = 250;

export const pushChecks: Check[] = [
  {
    name: 'push.duplicates',
    title: "the same delivery three times ends in the source's state: a request changed, resolved, created",
    async run(environment) {
      const push = await PushStage.open(environment);
      const [id = ''] = await synced(push, 2);
      const steps: [string, () => unknown][] = [
        [
          'a change of a request',
          () => push.stage.driver.change(id, { title: environment.title('Changed') }),
        ],
        ['its resolution', () => push.stage.driver.resolve(id)],
        ['a new request', () => push.stage.create(environment.title('Created'))],
      ];
      for (const [what, change] of steps) {
        await push.pass(await deliveriesOf(push, what, change), what, 3);
        await push.settled();
        await push.expectExact(` after each delivery of ${what} came three times at once, and no sync run`);
      }
    },
  },
  {
    name: 'push.out-of-order',
    title: "two deliveries out of order, after the source has moved on, end in the source's state",
    async run(environment) {
      const push = await PushStage.open(environment);
      const [id = ''] = await synced(push, 2);
      const { driver } = push.stage;
      const earlier = await deliveriesOf(push, 'a first change', () =>
        driver.change(id, { title: environment.title('First') }),
      );
      const later = await deliveriesOf(push, 'a second change', () =>
        driver.change(id, { title: environment.title('Second') }),
      );
      // Its delivery is still on its way: the source holds what neither delivery says.
      const last = await deliveriesOf(push, 'its resolution', () => driver.resolve(id));
      await push.pass(later, 'the second change');
      await push.pass(earlier, 'the first change, late');
      await push.settled();
      await push.expectExact(
        ' after the deliveries of two changes came in reverse order, the request resolved since, and no sync run',
      );
      await push.pass(last, 'the resolution, last');
      await push.settled();
      await push.expectExact(' after the delivery of the resolution came last');
    },
  },
  {
    name: 'push.missed',
    title: 'a dropped delivery is caught by the next sync run and counted missed, and a delivered one is not',
    async run(environment) {
      const push = await PushStage.open(environment);
      const [first = '', second = ''] = await synced(push, 3);
      const before = push.missed;
      const { driver } = push.stage;
      const delivered = await deliveriesOf(push, 'a change', () =>
        driver.change(first, { title: environment.title('Delivered') }),
      );
      await push.pass(delivered, 'a change');
      await push.settled();
      // Dropped: the source sent it, and it never reached the worker.
      await deliveriesOf(push, 'another change', () =>
        driver.change(second, { title: environment.title('Dropped') }),
      );
      await push.sync('the sync run after a delivery was dropped');
      await push.expectExact(' after a delivery was dropped and a sync run followed');
      const counted = push.missed - before;
      if (counted === 1) return;
      throw new ConformanceFailure(
        `the sync run to count one change missed: that of ${JSON.stringify(second)}, whose delivery was dropped, and not that of ${JSON.stringify(first)}, whose delivery came`,
        counted === 0
          ? 'it counted none: an event had named the request whose delivery was dropped (does approvalIds() name more than the delivery concerns?)'
          : `it counted ${counted}: the change whose delivery came was counted too (does approvalIds() name the approvals by the service's ids?)`,
      );
    },
  },
  {
    name: 'push.forged',
    title: 'a forged delivery is refused (401), counted refused, and changes nothing',
    async run(environment) {
      const push = await PushStage.open(environment);
      const [first = '', second = ''] = await synced(push, 2);
      const { driver } = push.stage;
      const [one] = await deliveriesOf(push, 'a change', () =>
        driver.change(first, { title: environment.title('Changed') }),
      );
      const [other] = await deliveriesOf(push, 'a change of another request', () =>
        driver.change(second, { title: environment.title('Changed') }),
      );
      if (one === undefined || other === undefined) return;
      const before = JSON.stringify(push.stage.harness.approvals());
      const refusedBefore = await push.counted('refused');
      const forgeries = forgeriesOf(one, other);
      const problems: string[] = [];
      for (const { name, delivery } of forgeries) {
        const status = await push.post(delivery);
        if (status !== 401) problems.push(`${name}: answered ${status}`);
      }
      await push.settled();
      const refused = (await push.counted('refused')) - refusedBefore;
      if (refused !== forgeries.length)
        problems.push(`${refused} of ${forgeries.length} were counted refused`);
      if (JSON.stringify(push.stage.harness.approvals()) !== before) {
        problems.push('the service changed: a forged delivery was taken for the source');
      }
      if (problems.length > 0) {
        throw new ConformanceFailure(
          'every forged delivery to be refused with 401, counted refused, and to change nothing',
          summarize(problems),
        );
      }
      await push.pass([one, other], 'the genuine deliveries, after the forged ones');
      await push.settled();
      await push.expectExact(' after forged deliveries were refused, and the genuine ones came');
    },
  },
  {
    name: 'push.gone',
    title: 'deliveries about requests the source no longer has resolve those, and nothing else',
    async run(environment) {
      // Long enough for every delivery to come before the lookup starts: they are looked up together.
      const push = await PushStage.open(environment, { delayMs: LOOKED_UP_TOGETHER_MS });
      requires(push.stage.driver.delete, 'the driver has no delete(): the source cannot lose a request');
      const [first = '', second = '', third = ''] = await synced(push, 3);
      const { stage } = push;
      const changed = [
        ...(await deliveriesOf(push, 'a change', () =>
          stage.driver.change(first, { title: environment.title('Changed') }),
        )),
        ...(await deliveriesOf(push, 'a change of another request', () =>
          stage.driver.change(second, { title: environment.title('Changed') }),
        )),
      ];
      const deleted = await deliveriesOf(push, 'a deletion', () => stage.delete(third), 'allowed');
      // A request raised and withdrawn before any sync run saw it: the service never had it.
      let fleeting = '';
      const raised = await deliveriesOf(
        push,
        'a new request',
        async () => (fleeting = await stage.create(environment.title('Fleeting'))),
        'allowed',
      );
      const withdrawn = await deliveriesOf(push, 'its deletion', () => stage.delete(fleeting), 'allowed');
      await push.pass(
        [...deleted, ...raised, ...changed, ...withdrawn],
        'deliveries about requests gone and not',
      );
      await push.settled();
      await push.expectExact(
        ` after the deliveries of two changes came among those about ${JSON.stringify(third)}, deleted, and ${JSON.stringify(fleeting)}, created and deleted before any sync run`,
        deleted.length > 0 ? 'resolved' : 'any',
      );
    },
  },
];
