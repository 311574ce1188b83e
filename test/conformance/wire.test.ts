import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceBackend, startReferenceBackend } from '../../src/backend/index.js';
import { IntegrationClient, NetworkError, ServerError } from '../../src/client/index.js';
import { type CrashPoint, Wire, type WireListener } from '../../src/conformance/wire.js';

// The conformance kit's wire, as an in-process worker's client uses it (its undici dispatcher) and as a worker in a
// process of its own does (an HTTP proxy): what passes, what a cut leaves in the service, and what the client sees.

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend();
});
afterAll(() => backend.close());

const MODES = ['dispatcher', 'http'] as const;

const stateOf = async (client: IntegrationClient) => (await client.getState())?.state;

async function through(mode: (typeof MODES)[number], listener?: WireListener, crash?: CrashPoint) {
  const { connectorToken } = backend.createTenant();
  const wire =
    mode === 'dispatcher'
      ? Wire.inProcess(backend.url, listener, crash)
      : await Wire.open(backend.url, listener, crash);
  const options = { token: connectorToken, retry: { retries: 0 } };
  const client = new IntegrationClient(
    mode === 'dispatcher'
      ? { ...options, baseUrl: backend.url, dispatcher: wire.dispatcher }
      : { ...options, baseUrl: wire.url },
  );
  const direct = new IntegrationClient({ ...options, baseUrl: backend.url });
  return {
    wire,
    client,
    direct,
    async close() {
      await Promise.all([client.close(), direct.close()]);
      await wire.close();
    },
  };
}

const APPROVAL = {
  id: 'REQ-1',
  title: 'Laptop',
  approvers: [{ id: 'approver@example.com' }],
  lastModified: '2026-12-07T10:00:00.000Z',
} as const;

describe.each(MODES)('through the wire as %s', (mode) => {
  it('passes each request and its answer, and counts it', async () => {
    const seen: string[] = [];
    const { wire, client, direct, close } = await through(mode, {
      request: (request) =>
        void seen.push(`${request.method} ${request.path} ${JSON.stringify(request.body)}`),
    });
    try {
      await client.putState({ step: 1 });
      expect(await stateOf(client)).toEqual({ step: 1 });
      expect(await stateOf(direct)).toEqual({ step: 1 });
      expect(seen).toEqual([
        'PUT /v2/connector/state {"state":{"step":1}}',
        'GET /v2/connector/state undefined',
      ]);
      expect(wire.requests).toBe(2);
    } finally {
      await close();
    }
  });

  it('cut before a state write: the write never arrives, the client sees a closed connection, and nothing after it arrives', async () => {
    const { wire, client, direct, close } = await through(mode, {}, { at: 'state', nth: 0, after: false });
    try {
      const error = await client.putState({ step: 1 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NetworkError);
      expect((error as NetworkError).reason).toBe('UND_ERR_SOCKET');
      expect(wire.isCut).toBe(true);
      await expect(client.putApprovals([APPROVAL])).rejects.toBeInstanceOf(NetworkError);
      expect(await stateOf(direct)).not.toHaveProperty('step');
      expect(await direct.getApprovals()).toEqual([]);
    } finally {
      await close();
    }
  });

  it('cut after a state write: the write arrives, and its answer never comes back', async () => {
    const { wire, client, direct, close } = await through(mode, {}, { at: 'state', nth: 0, after: true });
    try {
      await expect(client.putState({ step: 1 })).rejects.toBeInstanceOf(NetworkError);
      expect(wire.isCut).toBe(true);
      await wire.idle();
      expect(await stateOf(direct)).toEqual({ step: 1 });
    } finally {
      await close();
    }
  });

  it("answers in the service's place when a check says so, and the service hears nothing", async () => {
    const { client, direct, close } = await through(mode, {
      request: (request) =>
        request.path === '/v2/rawapprovals' ? { status: 503, body: { message: 'held back' } } : undefined,
    });
    try {
      const error = await client.putApprovals([APPROVAL]).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServerError);
      expect(error).toMatchObject({ status: 503 });
      expect(await direct.getApprovals()).toEqual([]);
    } finally {
      await close();
    }
  });
});

it('a request the client aborts while the wire holds it fails with the client’s reason, and the wire goes on with it', async () => {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reached = () => {};
  const holding = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const { wire, client, direct, close } = await through('dispatcher', {
    request: async () => {
      reached();
      await held;
    },
  });
  try {
    const controller = new AbortController();
    const written = client.putState({ step: 1 }, { signal: controller.signal });
    await holding;
    const reason = new Error('the worker stops');
    controller.abort(reason);
    await expect(written).rejects.toBe(reason);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    await wire.idle();
    // As a service does with a request already sent: it takes it.
    expect(await stateOf(direct)).toEqual({ step: 1 });
  } finally {
    await close();
  }
});
