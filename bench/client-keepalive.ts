import diagnostics from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { Pool } from 'undici';
import { IntegrationClient } from '../src/client/index.js';
import { createTestHarness, type TestHarness } from '../src/testing/index.js';
import { type Row, ratio, whole } from './support/table.js';

/** Settings of the client benchmark. */
export interface ClientBenchOptions {
  /** How long each variant sends in one round, in milliseconds. */
  durationMs: number;
  /** Rounds; the variants alternate within each, so a slow moment of the machine hits both. */
  rounds: number;
  /** Requests in flight at once (the sync loop's default concurrency is 4). */
  inFlight: number;
}

interface Variant {
  name: string;
  /** Builds the client; the benchmark closes it (and the dispatcher it returns) after each round. */
  create: (harness: TestHarness) => { client: IntegrationClient; close: () => Promise<void> };
}

/** The client as a connector gets it: its own keep-alive pool (16 connections by default). */
const keepAlive: Variant = {
  name: 'keep-alive pool (default)',
  create: (harness) => {
    const client = new IntegrationClient(harness.serviceOptions());
    return { client, close: () => client.close() };
  },
};

/**
 * The same client, pool size and concurrency, with keep-alive off: undici's `pipelining: 0` sends
 * `connection: close`, so every request opens (and the server closes) a TCP connection.
 */
const connectionPerRequest: Variant = {
  name: 'new connection per request',
  create: (harness) => {
    const pool = new Pool(new URL(harness.backend.url).origin, { connections: 16, pipelining: 0 });
    const client = new IntegrationClient(harness.serviceOptions({ dispatcher: pool }));
    return {
      client,
      close: async () => {
        await client.close();
        await pool.close();
      },
    };
  },
};

let sequence = 0;

/** Sends Update approvals requests of one new approval each, `inFlight` at a time, for `durationMs`. */
async function send(client: IntegrationClient, options: ClientBenchOptions): Promise<number> {
  const deadline = performance.now() + options.durationMs;
  let sent = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      sequence += 1;
      await client.putApprovals([
        {
          id: `REQ-${sequence}`,
          schemaId: 'purchase-order',
          approver: 'approver-1',
          resolved: false,
          lastModified: new Date(Date.UTC(2026, 0, 1) + sequence).toISOString(),
          data: { title: `Request ${sequence}` },
        },
      ]);
      sent += 1;
    }
  };
  await Promise.all(Array.from({ length: options.inFlight }, worker));
  return sent;
}

/**
 * Requests per second of `IntegrationClient.putApprovals` against the reference backend in-process, with the default
 * keep-alive pool and with a pool that opens a new connection per request; the TCP connections each opened are
 * counted from undici's diagnostics channel.
 */
export async function benchClient(options: ClientBenchOptions): Promise<Row[]> {
  let connections = 0;
  const onConnected = () => {
    connections += 1;
  };
  diagnostics.subscribe('undici:client:connected', onConnected);
  const harness = await createTestHarness({
    backend: { host: '127.0.0.1', logger: pino({ level: 'silent' }) },
  });
  const variants = [keepAlive, connectionPerRequest];
  const totals = new Map(variants.map((variant) => [variant, { requests: 0, ms: 0, connections: 0 }]));
  try {
    for (const variant of variants) {
      // Warm-up: compiles the code paths of both variants before anything is timed.
      const { client, close } = variant.create(harness);
      await send(client, { ...options, durationMs: 300 });
      await close();
    }
    for (let round = 0; round < options.rounds; round += 1) {
      for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
        const { client, close } = variant.create(harness);
        const opened = connections;
        const started = performance.now();
        const requests = await send(client, options);
        const ms = performance.now() - started;
        await close();
        const total = totals.get(variant)!;
        total.requests += requests;
        total.ms += ms;
        total.connections += connections - opened;
      }
    }
  } finally {
    await harness.close();
    diagnostics.unsubscribe('undici:client:connected', onConnected);
  }
  const rate = (variant: Variant) => {
    const total = totals.get(variant)!;
    return (total.requests / total.ms) * 1000;
  };
  const baseline = rate(connectionPerRequest);
  return [connectionPerRequest, keepAlive].map((variant) => {
    const total = totals.get(variant)!;
    return {
      name: `client putApprovals, ${variant.name}`,
      measurement: `${whole(rate(variant))} req/s (${whole(total.connections)} conns / ${whole(total.requests)} reqs)`,
      ratio: variant === connectionPerRequest ? '1.00x (baseline)' : ratio(rate(variant) / baseline),
    };
  });
}
