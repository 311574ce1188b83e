import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestHarness } from '../../../src/testing/index.js';
import type { ConnectorWorker } from '../../../src/worker/index.js';
import { at, openHarness, T0 } from '../../worker/support/harness.js';
import { captureLogs } from '../../worker/support/logs.js';
import type { MemorySource } from '../../worker/support/memory-source.js';
import { PushConnector, signed, WEBHOOK_SECRET } from '../../worker/support/push-connector.js';
import { call } from '../helpers.js';
import { type ConsoleSession, consoleCall, loginToken, signIn } from './support/session.js';

// The console cannot reach the worker: it shows push health as the worker that syncs saved it in its part of
// connector state. A real worker against the reference backend, its push going quiet while the sync finds changes,
// and the console's data for the system, as the page reads it.

const MINUTE = 60_000;
let harness: TestHarness;
let source: MemorySource;
let session: ConsoleSession;
/** The worker's wall clock, which the test moves. */
let clock: number;

beforeEach(async () => {
  ({ harness, source } = await openHarness({ approvals: ['PO-1'] }));
  session = await signIn(harness.backend, loginToken(harness.backend.createConsoleLink()));
  clock = T0 + 10 * MINUTE;
});

/** The connector's health as the console's page reads it (`GET /console/api/systems/:systemId`). */
async function shownHealth() {
  const answer = await consoleCall(harness.backend, session, 'GET', `/systems/${harness.tenant.system.id}`);
  expect(answer.status).toBe(200);
  return answer.body.health;
}

/** A sync run that finds these approvals changed in the source, of which no event said anything. */
async function unannounced(worker: ConnectorWorker<PushConnector>, ids: string[]): Promise<void> {
  clock += MINUTE;
  for (const id of ids) source.put(id, new Date(clock).toISOString(), { data: { title: 'Changed' } });
  await worker.syncNow();
}

describe("push health in the console's connector health", () => {
  it('shows push degraded, since when and how many changes it missed, and healthy again after a delivery', async () => {
    const worker = await harness.start(new PushConnector(source), {
      push: { secret: WEBHOOK_SECRET, missedGraceMs: 0, degradedAfterMissed: 2 },
      now: () => clock,
    });
    await worker.syncNow();
    const liveAt = new Date(T0 + 10 * MINUTE).toISOString();
    expect((await shownHealth()).push).toEqual({
      state: 'healthy',
      since: liveAt,
      missed: 0,
      missedSinceLastDelivery: 0,
    });

    await unannounced(worker, ['PO-2']);
    await unannounced(worker, ['PO-3']);
    expect(worker.pushHealth?.state).toBe('degraded');
    const degradedAt = new Date(clock).toISOString();
    // Written as push turned degraded, not at the next run.
    await vi.waitFor(async () =>
      expect((await shownHealth()).push).toEqual({
        state: 'degraded',
        since: degradedAt,
        missed: 2,
        missedSinceLastDelivery: 2,
      }),
    );

    clock += MINUTE;
    expect(await harness.deliver(worker, signed({ ids: ['PO-3'] }, 'D-1'))).toBe(202);
    const recoveredAt = new Date(clock).toISOString();
    await vi.waitFor(async () =>
      expect((await shownHealth()).push).toEqual({
        state: 'healthy',
        since: recoveredAt,
        missed: 2,
        missedSinceLastDelivery: 0,
        lastDeliveryAt: recoveredAt,
      }),
    );
  });

  it('shows push stopped once its worker stopped, and nothing for a connector without a push path', async () => {
    const worker = await harness.start(new PushConnector(source), { push: { secret: WEBHOOK_SECRET } });
    await worker.syncNow();
    expect((await shownHealth()).push).toMatchObject({ state: 'healthy' });
    await worker.stop();
    expect((await shownHealth()).push).toMatchObject({ state: 'stopped', missed: 0 });

    const other = await openHarness();
    const quiet = await consoleCall(other.harness.backend, session, 'GET', '/organizations');
    expect(quiet.status).toBe(401);
    const own = await signIn(other.harness.backend, loginToken(other.harness.backend.createConsoleLink()));
    const answer = await consoleCall(
      other.harness.backend,
      own,
      'GET',
      `/systems/${other.harness.tenant.system.id}`,
    );
    expect(answer.body.health).not.toHaveProperty('push');
  });

  it('shows push health that failed to save once the next write saves it, and a restarted worker’s own', async () => {
    const { lines, destination } = captureLogs();
    const worker = await harness.start(new PushConnector(source), {
      push: { secret: WEBHOOK_SECRET, missedGraceMs: 200, degradedAfterMissed: 1 },
      service: harness.serviceOptions({ retry: { retries: 0 } }),
      logger: { level: 'warn', destination },
      now: () => clock,
    });
    await worker.syncNow();
    await unannounced(worker, ['PO-2']);
    // The run has saved its cursor; its missed change is judged after the grace, and that write fails.
    harness.faults.inject({
      method: 'PUT',
      path: '/v2/connector/state',
      times: 1,
      fault: { type: 'status', status: 503 },
    });
    await vi.waitFor(() =>
      expect(lines.map((line) => line.msg)).toContain(
        'saving push health in connector state failed; saved with the next write',
      ),
    );
    expect(worker.pushHealth?.state).toBe('degraded');
    expect((await shownHealth()).push).toMatchObject({ state: 'healthy' });
    // A run that changes nothing else writes it.
    await worker.syncNow();
    expect((await shownHealth()).push).toMatchObject({ state: 'degraded', missed: 1 });

    await worker.stop();
    clock += MINUTE;
    const restarted = await harness.start(new PushConnector(source), {
      push: { secret: WEBHOOK_SECRET },
      now: () => clock,
    });
    await restarted.syncNow();
    expect((await shownHealth()).push).toEqual({
      state: 'healthy',
      since: new Date(clock).toISOString(),
      missed: 0,
      missedSinceLastDelivery: 0,
    });
  });

  it('shows nothing of a state that does not read as push health, and never more than push health', async () => {
    // Written as a connector writes its state, through the service's API.
    const write = async (health: unknown) => {
      const state = { kit: { version: 1, sync: {}, push: { health } } };
      const answer = await call(harness.backend, 'PUT', '/v2/connector/state', {
        token: harness.tenant.connectorToken,
        body: { state },
      });
      expect(answer.status).toBe(200);
    };
    await write({ state: 'healthy', since: 'a while ago', missed: 1, missedSinceLastDelivery: 0 });
    expect(await shownHealth()).not.toHaveProperty('push');
    await write({
      state: 'degraded',
      since: at(0),
      missed: 3,
      missedSinceLastDelivery: 3,
      note: 'x'.repeat(100_000),
    });
    expect((await shownHealth()).push).toEqual({
      state: 'degraded',
      since: at(0),
      missed: 3,
      missedSinceLastDelivery: 3,
    });
  });
});
