import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { TestHarness } from '../../src/testing/index.js';
import { DEFAULT_KEY_FILE } from '../../src/worker/core/connector-options.js';
import { ConnectorWorker } from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';
import { MemoryConnector, MemorySource } from './support/memory-source.js';

let harness: TestHarness;
let directory: string;
const home = process.cwd();

beforeEach(async () => {
  ({ harness } = await openHarness());
  directory = await mkdtemp(join(tmpdir(), 'connector-keys-'));
  process.chdir(directory);
});
afterEach(async () => {
  process.chdir(home);
  await rm(directory, { recursive: true, force: true });
});

class Authenticating extends MemoryConnector {
  override readonly authRequired = true;
}

it('keeps keys in a 0600 file under the working directory when no key store is given, never in state', async () => {
  const source = new MemorySource();
  source.put('PO-1', '2026-05-01T10:00:00.000Z');
  const { keyStore: _, ...options } = harness.connectorOptions();
  const worker = new ConnectorWorker(new Authenticating(source), options);
  await worker.start();
  await worker.syncNow();

  const file = join(directory, DEFAULT_KEY_FILE);
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  const stored = JSON.parse(await readFile(file, 'utf8')) as {
    keys: { publicKey: string; secretKey: string }[];
  };
  const registered = harness.backend.getConnector(harness.tenant.system.id).publicKey;
  expect(stored.keys.map((key) => key.publicKey)).toContain(registered);

  const task = harness.createTask(worker, {
    type: 'approve',
    approvalId: 'PO-1',
    credentials: { password: 'pw' },
  });
  expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
  await worker.stop();

  const state = JSON.stringify(harness.state());
  for (const key of stored.keys) expect(state).not.toContain(key.secretKey);
});
