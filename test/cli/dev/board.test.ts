import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceBackend, startReferenceBackend, type Tenant } from '../../../src/backend/index.js';
import { ConnectorBoard } from '../../../src/cli/dev/board.js';
import { IntegrationClient } from '../../../src/client/index.js';

// The figures of a status line, from a reference backend over real HTTP and from log lines as a worker writes them.

let backend: ReferenceBackend;
let now = Date.parse('2026-05-01T10:00:00.000Z');
const clock = () => now;

beforeAll(async () => {
  backend = await startReferenceBackend({ now: clock });
});
afterAll(() => backend.close());

function watched(tenant: Tenant) {
  const board = new ConnectorBoard('my-connector', tenant.system.id, backend, clock);
  const unwatch = backend.watch((change) => board.heard(change));
  const client = new IntegrationClient({ baseUrl: backend.url, token: tenant.connectorToken });
  const close = async () => {
    unwatch();
    await client.close();
  };
  return { board, client, close };
}

const approval = (id: string) => ({
  id,
  schemaId: 'request',
  approver: 'ada',
  resolved: false,
  lastModified: new Date('2026-05-01T09:00:00.000Z'),
  data: {},
});

describe('ConnectorBoard', () => {
  it('counts the approvals the backend received from its system, and their rate while they come', async () => {
    const mine = watched(backend.createTenant());
    const other = watched(backend.createTenant());
    await mine.client.putApprovals([approval('A-1'), approval('A-2'), approval('A-3')]);
    await other.client.putApprovals([approval('B-1')]);
    // Sent again: received again, as the worker counts what it pushed.
    await mine.client.putApprovals([approval('A-1')]);
    expect(mine.board.snapshot().approvals).toEqual({ synced: 4, perSecond: 4 });
    now += 60_000;
    expect(mine.board.snapshot().approvals).toEqual({ synced: 4, perSecond: undefined });
    await Promise.all([mine.close(), other.close()]);
  });

  it('counts the system’s tasks as waiting, running and done, with those that failed', async () => {
    const tenant = backend.createTenant();
    const { board, client, close } = watched(tenant);
    await client.registerConnector({ taskTypes: ['approve'], authRequired: false });
    await client.putApprovals([approval('T-1')]);
    const create = () =>
      backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'T-1' });
    for (let n = 0; n < 4; n += 1) create();
    expect(board.snapshot().tasks).toEqual({ waiting: 4, running: 0, done: 0, failed: 0 });

    const first = await client.getTask();
    const second = await client.getTask();
    await client.getTask();
    expect(board.snapshot().tasks).toEqual({ waiting: 1, running: 3, done: 0, failed: 0 });
    await client.reportTaskResult(first!.id, { status: 'success' });
    await client.reportTaskResult(second!.id, { status: 'systemError', meta: { code: 'gone' } });
    expect(board.snapshot().tasks).toEqual({ waiting: 1, running: 1, done: 2, failed: 1 });
    // A lease that ends writes nothing: the board counts again while a task is leased.
    now += 10 * 60_000;
    expect(board.snapshot().tasks).toEqual({ waiting: 2, running: 0, done: 2, failed: 1 });
    await close();
  });

  it('keeps the last error: a worker’s line at error or above with its cause, or what the loop reports', () => {
    const board = new ConnectorBoard('my-connector', backend.createTenant().system.id, backend, clock);
    board.logged({ level: 40, msg: 'cannot register the connector yet; retrying' });
    expect(board.snapshot().lastError).toBeUndefined();
    board.logged({
      level: 50,
      msg: 'sync run failed; the next run resumes from the saved cursor',
      err: { message: 'the source cannot be reached' },
    });
    expect(board.snapshot().lastError).toEqual({
      at: now,
      message: 'sync run failed; the next run resumes from the saved cursor: the source cannot be reached',
    });
    now += 1_000;
    board.error('the build failed');
    expect(board.snapshot().lastError).toEqual({ at: now, message: 'the build failed' });
  });
});
