import { createTestHarness } from 'approval-connector-kit/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseSourceApprovalId } from '../src/approvals.js';
import { JiraHttpError } from '../src/errors.js';
import { JiraClient } from '../src/jira-client.js';
import { JiraDriver } from './jira-driver.js';

// The driver's share of the conformance battery: each failure on the calls of its operation only, for as long as
// asked; the battery's clock; short search pages.
let driver: JiraDriver;

beforeEach(async () => {
  driver = await JiraDriver.start();
});

afterEach(() => driver.close());

/** Jira as the sync account, and as the approver of the request `id`, with the approval's ids. */
function clients(id: string) {
  const { url, syncAccount } = driver.simulator;
  const { issueId, approvalId, accountId } = parseSourceApprovalId(id)!;
  const { email, apiToken } = driver.credentials(accountId) as { email: string; apiToken: string };
  return {
    sync: new JiraClient({ baseUrl: url, email: syncAccount.email, apiToken: syncAccount.apiToken }),
    approver: new JiraClient({ baseUrl: url, email, apiToken }),
    issueId,
    approvalId,
  };
}

async function search(jira: JiraClient): Promise<string[]> {
  const keys: string[] = [];
  for await (const issue of jira.searchIssues(driver.simulator.jql)) keys.push(issue.key);
  return keys;
}

describe('fail', () => {
  it('fails the answers to approvals until restored, and no search meanwhile', async () => {
    const id = await driver.create({ approver: driver.approvers[0]!, title: 'A laptop' });
    const { sync, approver, issueId, approvalId } = clients(id);

    const restore = await driver.fail('unavailable', { operation: 'action', times: 'until-restored' });
    await expect(search(sync)).resolves.toHaveLength(1);
    await expect(approver.getApproval(issueId, approvalId)).resolves.toMatchObject({
      finalDecision: 'pending',
    });
    for (let i = 0; i < 2; i++) {
      await expect(approver.answerApproval(issueId, approvalId, 'approve')).rejects.toMatchObject({
        status: 503,
      });
    }
    expect(driver.actions(id)).toBe(0);

    await restore();
    await approver.answerApproval(issueId, approvalId, 'approve');
    expect(driver.actions(id)).toBe(1);
  });

  it('heals by itself after the number of calls asked', async () => {
    await driver.create({ approver: driver.approvers[0]!, title: 'A laptop' });
    const { sync } = clients(driver.holds()[0]!.id);

    await driver.fail('unavailable', { operation: 'changes', times: 1 });
    await expect(search(sync)).rejects.toBeInstanceOf(JiraHttpError);
    await expect(search(sync)).resolves.toHaveLength(1);
  });

  it("fails the pre-check's reads, and not reconciliation's", async () => {
    const id = await driver.create({ approver: driver.approvers[0]!, title: 'A laptop' });
    const { sync, approver, issueId, approvalId } = clients(id);

    const restore = await driver.fail('unauthorized', { operation: 'precheck', times: 'until-restored' });
    await expect(approver.getApproval(issueId, approvalId)).rejects.toMatchObject({ status: 401 });
    await expect(approver.myself()).rejects.toMatchObject({ status: 401 });
    await expect(sync.issue(issueId)).resolves.toMatchObject({ id: issueId });
    await restore();

    await driver.fail('unavailable', { operation: 'lookup', times: 'until-restored' });
    await expect(sync.issue(issueId)).rejects.toMatchObject({ status: 503 });
    await expect(approver.getApproval(issueId, approvalId)).resolves.toMatchObject({ id: approvalId });
  });

  it('carries a slow answer out once it is through', async () => {
    const id = await driver.create({ approver: driver.approvers[0]!, title: 'A laptop' });
    const { approver, issueId, approvalId } = clients(id);

    await driver.fail('slow', { operation: 'action', times: 1, delayMs: 10 });
    await approver.answerApproval(issueId, approvalId, 'approve');
    expect(driver.actions(id)).toBe(1);
  });

  it('carries out no slow answer that its caller gave up', async () => {
    const id = await driver.create({ approver: driver.approvers[0]!, title: 'A laptop' });
    const { approver, issueId, approvalId } = clients(id);

    await driver.fail('slow', { operation: 'action', times: 'until-restored', delayMs: 600_000 });
    const controller = new AbortController();
    const answer = approver.answerApproval(issueId, approvalId, 'approve', { signal: controller.signal });
    await vi.waitFor(() => expect(driver.simulator.waiting).toBe(1));
    const reason = new Error('the task is past its deadline');
    controller.abort(reason);

    await expect(answer).rejects.toBe(reason);
    // The site let the call go without carrying it out: it waits for nothing any more.
    await vi.waitFor(() => expect(driver.simulator.waiting).toBe(0));
    expect(driver.actions(id)).toBe(0);
    expect(driver.holds()).toMatchObject([{ id, resolved: false }]);
  });
});

describe('setClock', () => {
  it("stamps each change with the battery's clock, held still inside sameInstant", async () => {
    let now = Date.parse('2031-05-06T07:08:09.123Z');
    driver.setClock(() => now++ + 0.5);

    const first = await driver.create({ approver: driver.approvers[0]!, title: 'A laptop' });
    expect(driver.holds()).toMatchObject([{ id: first, lastModified: new Date('2031-05-06T07:08:09.123Z') }]);

    const [a, b] = await driver.sameInstant(async () => [
      await driver.create({ approver: driver.approvers[0]!, title: 'A screen' }),
      await driver.create({ approver: driver.approvers[1]!, title: 'A desk' }),
    ]);
    const stamps = driver.holds().filter(({ id }) => id === a || id === b);
    expect(stamps.map(({ lastModified }) => lastModified)).toEqual([
      new Date('2031-05-06T07:08:09.124Z'),
      new Date('2031-05-06T07:08:09.124Z'),
    ]);
  });
});

describe('shortPages', () => {
  it('answers search pages shorter than asked, not the last, and the connector still reads every request', async () => {
    for (let i = 0; i < 12; i++) {
      await driver.create({ approver: driver.approvers[i % 2]!, title: `Request ${i}` });
    }
    driver.shortPages(true);

    const { sync } = clients(driver.holds()[0]!.id);
    const params = new URLSearchParams({ jql: driver.simulator.jql, maxResults: '3' });
    const { email, apiToken } = driver.simulator.syncAccount;
    const answer = await fetch(`${driver.simulator.url}/rest/api/3/search/jql?${params}`, {
      headers: { authorization: `Basic ${Buffer.from(`${email}:${apiToken}`).toString('base64')}` },
    });
    const page = (await answer.json()) as { issues: unknown[]; isLast: boolean };
    expect(page.issues.length).toBeGreaterThanOrEqual(1);
    expect(page.issues.length).toBeLessThan(3);
    expect(page.isLast).toBe(false);
    await expect(search(sync)).resolves.toHaveLength(12);

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
