import { createTestHarness } from 'approval-connector-kit/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SapInboxClient } from '../src/client.js';
import { parseApprovalId } from '../src/mapping.js';
import type { OpenTask, TaskRef } from '../src/model.js';
import { SapDriver } from './sap-driver.js';

// The driver's share of the conformance battery: each failure on the requests of its operation only, for as long
// as asked; short pages of the task collection.
let driver: SapDriver;
const signal = new AbortController().signal;

beforeEach(async () => {
  driver = await SapDriver.start();
});

afterEach(() => driver.close());

function client(): SapInboxClient {
  return new SapInboxClient({ serviceUrl: driver.simulator.serviceUrl });
}

/** A task for the first approver: its approval's id, its reference in SAP, and the approver's credentials. */
function newTask(title = 'Office chairs') {
  const approver = driver.approvers[0]!;
  const id = driver.create({ approver, title });
  const ref: TaskRef = parseApprovalId(id).ref;
  const { username, password } = driver.credentials(approver) as { username: string; password: string };
  return { id, ref, credentials: { username, password } };
}

async function openTasks(): Promise<OpenTask[]> {
  const open: OpenTask[] = [];
  for await (const task of client().openTasks({ credentials: driver.simulator.technicalUser, signal })) {
    open.push(task);
  }
  return open;
}

const APPROVE = { decisionKey: '0001', comments: '' };

describe('fail', () => {
  it('fails the Decision until restored, and no read of the inbox meanwhile', async () => {
    const { id, ref, credentials } = newTask();

    const restore = await driver.fail('unavailable', { operation: 'action', times: 'until-restored' });
    await expect(openTasks()).resolves.toHaveLength(1);
    await expect(client().task(ref, { credentials, signal })).resolves.toMatchObject({ Status: 'READY' });
    for (let i = 0; i < 2; i++) {
      await expect(client().decide(ref, APPROVE, { credentials, signal })).rejects.toMatchObject({
        status: 503,
      });
    }
    expect(driver.actions(id)).toBe(0);

    await restore();
    await client().decide(ref, APPROVE, { credentials, signal });
    expect(driver.actions(id)).toBe(1);
  });

  it('heals by itself after the number of requests asked', async () => {
    newTask();

    await driver.fail('unavailable', { operation: 'changes', times: 1 });
    await expect(openTasks()).rejects.toMatchObject({ status: 503 });
    await expect(openTasks()).resolves.toHaveLength(1);
  });

  it("fails the pre-check's read of the task, and not the listing", async () => {
    const { ref, credentials } = newTask();

    await driver.fail('unauthorized', { operation: 'precheck', times: 'until-restored' });
    await expect(client().task(ref, { credentials, signal })).rejects.toMatchObject({ status: 401 });
    await expect(openTasks()).resolves.toHaveLength(1);
  });

  it('refuses the CSRF token of a Decision when forbidden', async () => {
    const { id, ref, credentials } = newTask();

    await driver.fail('forbidden', { operation: 'action', times: 'until-restored' });
    await expect(client().decide(ref, APPROVE, { credentials, signal })).rejects.toMatchObject({
      status: 403,
    });
    expect(driver.actions(id)).toBe(0);
  });

  it('carries a slow Decision out once it is through', async () => {
    const { id, ref, credentials } = newTask();

    await driver.fail('slow', { operation: 'action', times: 1, delayMs: 10 });
    await client().decide(ref, APPROVE, { credentials, signal });
    expect(driver.actions(id)).toBe(1);
  });

  it('carries out no slow Decision that its caller gave up', async () => {
    const { id, ref, credentials } = newTask();

    await driver.fail('slow', { operation: 'action', times: 'until-restored', delayMs: 600_000 });
    const controller = new AbortController();
    const decision = client().decide(ref, APPROVE, { credentials, signal: controller.signal });
    await vi.waitFor(() => expect(driver.simulator.waiting).toBe(1));
    const reason = new Error('the task is past its deadline');
    controller.abort(reason);

    await expect(decision).rejects.toBe(reason);
    // The system let the request go without carrying it out: it waits for nothing any more.
    await vi.waitFor(() => expect(driver.simulator.waiting).toBe(0));
    expect(driver.actions(id)).toBe(0);
    expect(driver.holds()).toMatchObject([{ id, resolved: false }]);
  });
});

describe('shortPages', () => {
  it('answers pages of the task collection shorter than asked, and the connector still reads every task', async () => {
    for (let i = 0; i < 12; i++) driver.create({ approver: driver.approvers[i % 2]!, title: `Chairs ${i}` });
    driver.shortPages(true);

    const { username, password } = driver.simulator.technicalUser;
    const answer = await fetch(`${driver.simulator.serviceUrl}TaskCollection?$top=3`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
        accept: 'application/json',
      },
    });
    const { d } = (await answer.json()) as { d: { results: unknown[]; __next?: string } };
    expect(d.results.length).toBeGreaterThanOrEqual(1);
    expect(d.results.length).toBeLessThan(3);
    expect(d.__next).toBeDefined();
    await expect(openTasks()).resolves.toHaveLength(12);

    const harness = await createTestHarness();
    try {
      const worker = await harness.start(driver.connector());
      await worker.syncNow();
      expect(
        harness
          .approvals()
          .map(({ id }) => id)
          .sort(),
      ).toEqual(
        driver
          .holds()
          .map(({ id }) => id)
          .sort(),
      );
    } finally {
      await harness.close();
    }
  });
});
