import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SystemRecord } from '../../../src/backend/index.js';
import { type LoopConnector, workerEnvironment } from '../../../src/cli/dev/worker-env.js';

// The environment the local loop gives a connector's worker: here, the push ingress, where a simulated source on
// this machine delivers (the loop's port and address), and a tunnel's address the project sets kept.
let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'worker-env-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

function connector(): LoopConnector {
  return {
    project,
    tenant: { system: { id: 'system-1' } as SystemRecord, connectorToken: 'dev-connector-x', approvers: [] },
    operationsUrl: 'http://127.0.0.1:41001',
    pushUrl: 'http://127.0.0.1:41002/push',
  };
}

const environment = (env: Record<string, string> = {}) =>
  workerEnvironment(connector(), {}, 'http://127.0.0.1:8080', env);

describe("the worker's push ingress in the local loop", () => {
  it("is the loop's port and address, with a secret of the session's", () => {
    const env = environment();

    expect(env).toMatchObject({
      PUSH_PORT: '41002',
      PUSH_HOST: '127.0.0.1',
      PUSH_PUBLIC_URL: 'http://127.0.0.1:41002/push',
    });
    expect(env.PUSH_SECRET?.length).toBeGreaterThanOrEqual(16);
    expect(environment().PUSH_SECRET).not.toBe(env.PUSH_SECRET);
  });

  it("keeps the project's secret, and its address when it is not on this machine (a tunnel), not its port", () => {
    writeFileSync(
      join(project, '.env'),
      'PUSH_PORT=9465\nPUSH_PUBLIC_URL=https://tunnel.example.com/push\nPUSH_SECRET=a-shared-secret-0123\n',
    );

    expect(environment()).toMatchObject({
      PUSH_PORT: '41002',
      PUSH_PUBLIC_URL: 'https://tunnel.example.com/push',
      PUSH_SECRET: 'a-shared-secret-0123',
    });
  });

  it("replaces the project's address on this machine with the loop's", () => {
    expect(environment({ PUSH_PUBLIC_URL: 'http://localhost:9465/push' }).PUSH_PUBLIC_URL).toBe(
      'http://127.0.0.1:41002/push',
    );
  });
});
