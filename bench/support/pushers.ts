/**
 * Three ways to push the same source to the service, run in a process of their own (`client-process.ts`): the kit's
 * sync with its defaults, a hand-written undici loop sending the same batches at the same concurrency, and a naive
 * connector sending one approval per request with the global `fetch`. Each reads the same lazy source of
 * {@link kilobyteApproval}s, and only the push itself is measured.
 */
import { Pool } from 'undici';
import { ConnectorWorker, MemoryKeyStore } from '../../src/worker/index.js';
import { kilobyteApproval, LazyConnector, lazyApprovals } from './lazy-source.js';
import { type Measured, measure } from './measure.js';

/** The kit's sync, a hand-written undici loop, or a naive connector with `fetch`. */
export type Pusher = 'kit' | 'undici' | 'fetch';

/** One push of a fresh source into a system of its own. */
export interface PushRun {
  url: string;
  /** The system's connector token. */
  token: string;
  count: number;
  /** For the undici loop: approvals per request and requests in flight (the kit's defaults, as the caller reads them). */
  batchSize: number;
  concurrency: number;
}

const PATH = '/v2/rawapprovals';

/** A first sync of `count` approvals by a connector with the kit's defaults; only `syncNow()` is measured. */
async function pushWithKit(run: PushRun): Promise<Measured> {
  const worker = new ConnectorWorker(new LazyConnector(run.count, { approval: kilobyteApproval }), {
    service: { baseUrl: run.url, token: run.token },
    logger: { level: 'silent' },
    keyStore: new MemoryKeyStore(),
    // No schedule comes due during a run: the one run measured is `syncNow()`.
    sync: { runOnStart: false, schedule: 3_600_000, reconcileSchedule: false },
    poller: { enabled: false },
  });
  await worker.start();
  try {
    let pushed = 0;
    const measured = await measure(async () => {
      pushed = (await worker.syncNow()).pushed;
    });
    if (pushed !== run.count) throw new Error(`the kit pushed ${pushed} of ${run.count} approvals`);
    return measured;
  } finally {
    await worker.stop();
  }
}

/**
 * What a developer would write with undici alone: batches of `batchSize` serialized as they are, `concurrency`
 * requests in flight on a pool of as many connections, each answer read and checked. No validation, no cursor.
 */
async function pushWithUndici(run: PushRun): Promise<Measured> {
  const pool = new Pool(run.url, { connections: run.concurrency });
  const headers = { authorization: `Bearer ${run.token}`, 'content-type': 'application/json' };
  const send = async (body: string) => {
    const answer = await pool.request({ method: 'PUT', path: PATH, headers, body });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`PUT ${PATH} answered ${answer.statusCode}: ${text}`);
  };
  try {
    return await measure(async () => {
      const inFlight = new Set<Promise<void>>();
      const dispatch = async (batch: unknown[]) => {
        while (inFlight.size >= run.concurrency) await Promise.race(inFlight);
        const sending: Promise<void> = send(JSON.stringify({ approvals: batch })).finally(() =>
          inFlight.delete(sending),
        );
        inFlight.add(sending);
      };
      let batch: unknown[] = [];
      for await (const approval of lazyApprovals(run.count, undefined, kilobyteApproval)) {
        batch.push(approval);
        if (batch.length === run.batchSize) {
          await dispatch(batch);
          batch = [];
        }
      }
      if (batch.length > 0) await dispatch(batch);
      await Promise.all(inFlight);
    });
  } finally {
    await pool.close();
  }
}

/** A naive connector: one approval per request, one request at a time, with the global `fetch`. */
async function pushWithFetch(run: PushRun): Promise<Measured> {
  const headers = { authorization: `Bearer ${run.token}`, 'content-type': 'application/json' };
  return measure(async () => {
    for await (const approval of lazyApprovals(run.count, undefined, kilobyteApproval)) {
      const answer = await fetch(`${run.url}${PATH}`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ approvals: [approval] }),
      });
      const text = await answer.text();
      if (answer.status !== 200) throw new Error(`PUT ${PATH} answered ${answer.status}: ${text}`);
    }
  });
}

export const PUSHERS: Record<Pusher, (run: PushRun) => Promise<Measured>> = {
  kit: pushWithKit,
  undici: pushWithUndici,
  fetch: pushWithFetch,
};
