import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Exchange,
  FAULT_KINDS,
  type FaultKind,
  FaultProxy,
  type FaultProxyOptions,
} from './fault-proxy.js';

/** A request as the server behind the proxy saw it. */
interface Arrival {
  method: string;
  path: string;
  body: string;
  /** Whether its whole body came. */
  complete: boolean;
}

let server: Server;
let target: string;
let arrivals: Arrival[];
let arrived: (() => void)[];
const proxies: FaultProxy[] = [];

// The server answers each request with a JSON echo of its body, long enough to be cut in half.
beforeEach(async () => {
  arrivals = [];
  arrived = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    const record = (complete: boolean) => {
      arrivals.push({
        method: req.method ?? '',
        path: req.url ?? '',
        body: Buffer.concat(chunks).toString(),
        complete,
      });
      for (const resolve of arrived.splice(0)) resolve();
    };
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      record(true);
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo': 'yes' });
      res.end(JSON.stringify({ echo: Buffer.concat(chunks).toString(), padding: 'x'.repeat(2000) }));
    });
    req.on('close', () => {
      if (!req.complete) record(false);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  server.closeAllConnections();
  server.close();
});

async function proxy(options: Partial<FaultProxyOptions> = {}): Promise<FaultProxy> {
  const started = await FaultProxy.start({ target, seed: 1, ...options });
  proxies.push(started);
  return started;
}

/** Waits until the server has seen `count` requests. */
async function arrivalsReach(count: number): Promise<void> {
  while (arrivals.length < count) await new Promise<void>((resolve) => arrived.push(resolve));
}

const body = JSON.stringify({ state: { cursor: 'x'.repeat(100) } });
const put = (url: string, path = '/v2/connector/state') =>
  request(`${url}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });

describe('the fault proxy', () => {
  it('forwards a request and its answer unchanged when it draws no fault', async () => {
    const { url } = await proxy({ faultRate: 0 });
    const answer = await put(url);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['x-echo']).toBe('yes');
    expect((await answer.body.json()) as object).toMatchObject({ echo: body });
    expect(arrivals).toEqual([{ method: 'PUT', path: '/v2/connector/state', body, complete: true }]);
  });

  it('drops the connection before forwarding: the server never sees the request', async () => {
    const { url } = await proxy({ faultRate: 1, kinds: ['drop-before'] });
    await expect(put(url)).rejects.toThrow();
    expect(arrivals).toEqual([]);
  });

  it('drops the connection after forwarding: the server has done the work, the client gets no answer', async () => {
    const { url } = await proxy({ faultRate: 1, kinds: ['drop-after'] });
    await expect(put(url)).rejects.toThrow();
    expect(arrivals).toEqual([{ method: 'PUT', path: '/v2/connector/state', body, complete: true }]);
  });

  it('cuts a request mid-body: the server sees half of it, then the connection close', async () => {
    const { url } = await proxy({ faultRate: 1, kinds: ['truncate-request'] });
    await expect(put(url)).rejects.toThrow();
    await arrivalsReach(1);
    expect(arrivals).toEqual([
      { method: 'PUT', path: '/v2/connector/state', body: body.slice(0, body.length / 2), complete: false },
    ]);
  });

  it('resets the connection mid-answer: the status comes, the whole body does not', async () => {
    const { url } = await proxy({ faultRate: 1, kinds: ['reset-mid-body'] });
    const answer = await put(url);
    expect(answer.statusCode).toBe(200);
    await expect(answer.body.text()).rejects.toThrow();
    expect(arrivals).toHaveLength(1);
  });

  it.each([
    ['status-503', 503],
    ['status-429', 429],
  ] as const)(
    'answers %s with Retry-After in the API’s error shape, forwarding nothing',
    async (kind, status) => {
      const { url } = await proxy({ faultRate: 1, kinds: [kind] });
      const v2 = await put(url);
      expect(v2.statusCode).toBe(status);
      expect(v2.headers['retry-after']).toMatch(/^[01]$/);
      expect(await v2.body.json()).toEqual({ status: 'failure' });
      const v1 = await request(`${url}/v1/systems`);
      expect(v1.statusCode).toBe(status);
      expect(((await v1.body.json()) as { Error: string }).Error).toMatch(
        status === 429 ? /^Too Many Requests\. / : /^Internal Server Error\. /,
      );
      expect(arrivals).toEqual([]);
    },
  );

  it('delays a request, then forwards it', async () => {
    const { url } = await proxy({ faultRate: 1, kinds: ['delay'], maxDelayMs: 20 });
    expect((await put(url)).statusCode).toBe(200);
    expect(arrivals).toHaveLength(1);
  });

  it('draws the same faults from the same seed, and others from another seed', async () => {
    const sequence = async (seed: number) => {
      const faults: FaultKind[] = [];
      const { url } = await proxy({
        seed,
        faultRate: 0.5,
        kinds: FAULT_KINDS.filter((kind) => kind !== 'delay'),
        listener: { received: (exchange: Exchange) => faults.push(exchange.fault) },
      });
      for (let n = 0; n < 40; n += 1) {
        await put(url).then(
          (answer) => answer.body.dump(),
          () => {},
        );
      }
      return faults;
    };
    const first = await sequence(7);
    expect(new Set(first).size).toBeGreaterThan(2);
    expect(await sequence(7)).toEqual(first);
    expect(await sequence(8)).not.toEqual(first);
  });

  it('tells its listener of each request before forwarding it and of each answer before passing it on', async () => {
    const events: string[] = [];
    const { url } = await proxy({
      faultRate: 0,
      listener: {
        received: (exchange) =>
          events.push(`received ${exchange.method} ${exchange.path}, seen ${arrivals.length}`),
        answered: (exchange, status) => events.push(`answered ${exchange.seq} ${status}`),
      },
    });
    await (await put(url)).body.dump();
    expect(events).toEqual(['received PUT /v2/connector/state, seen 0', 'answered 0 200']);
  });

  it('severs what it has not forwarded yet, as a network loses what a dead process still sent', async () => {
    let received: () => void = () => {};
    const receivedOne = new Promise<void>((resolve) => {
      received = resolve;
    });
    const faulty = await proxy({ faultRate: 0, latencyMs: 10_000, listener: { received } });
    const sent = put(faulty.url);
    await receivedOne;
    faulty.sever();
    await expect(sent).rejects.toThrow();
    await faulty.idle();
    expect(faulty.severed).toBe(1);
    expect(arrivals).toEqual([]);
    // What comes after is forwarded again.
    faulty.latencyMs = 0;
    expect((await put(faulty.url)).statusCode).toBe(200);
  });

  it('refuses a target off this machine and options out of range, naming them', async () => {
    await expect(FaultProxy.start({ target: 'http://example.com', seed: 1 })).rejects.toMatchObject({
      code: 'validation',
      message: expect.stringContaining(
        'Expected `target` to be an http URL on a loopback address (127.0.0.1, localhost, [::1]), got `"http://example.com"` (string)',
      ),
    });
    await expect(FaultProxy.start({ target: 'https://127.0.0.1:1', seed: 1 })).rejects.toMatchObject({
      code: 'validation',
    });
    await expect(FaultProxy.start({ target, seed: 1, faultRate: 2 })).rejects.toMatchObject({
      code: 'validation',
      message: expect.stringContaining('Expected `faultRate` to be a number up to 1, got `2` (number)'),
    });
  });
});
