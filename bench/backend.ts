import { performance } from 'node:perf_hooks';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { startReferenceBackend } from '../src/backend/index.js';
import { Store } from '../src/backend/store/index.js';
import { sampleApproval } from './support/lazy-source.js';
import { drive, type LoadRequest } from './support/load.js';
import { type ServerProcess, startServerProcess } from './support/server.js';
import { median, spread } from './support/stats.js';
import { type Row, range, ratio, whole } from './support/table.js';

/** Settings of the backend benchmarks. */
export interface BackendBenchOptions {
  /** Rounds; within each, a row's variants alternate, so a slow moment of the machine hits both. */
  rounds: number;
  /** Requests per variant in one round. */
  requests: number;
  /** Requests in flight at once, each on its own keep-alive connection. */
  inFlight: number;
  /** Users in the organization that Get users reads (at least 4,243, so that the search term matches). */
  users: number;
  /** Queue depths of the lease rows; the first is their baseline. */
  leaseDepths: readonly number[];
  /** Leases timed per depth in one round. */
  leases: number;
  /** Starts timed per variant in one round. */
  starts: number;
}

/** Approvals in each Update approvals body. */
const BATCH = 50;
/** Get users' search: `Last4242` and, with 100,000 users, `Last42420` to `Last42429`. */
const SEARCH_TERM = 'Last4242';
/**
 * A term under 3 characters, which the trigram index cannot look up: every user of the organization is tested. No
 * user matches it, so the whole organization is read for a page.
 */
const SHORT_TERM = 'zq';

/** One side of a throughput row: a server, and the request it is sent. */
interface Variant {
  name: string;
  server: () => ServerProcess;
  /** Builds the requests of one run before it is timed; `tag` tells runs apart. */
  requests: (count: number, tag: string) => (index: number) => LoadRequest;
}

interface Throughput {
  rate: number;
  /** CPU time of the server process per request, in microseconds. */
  cpu: number;
}

/** `count` Update approvals bodies of {@link BATCH} new approvals each, their ids unique to `tag`. */
function putBodies(count: number, tag: string): string[] {
  return Array.from({ length: count }, (_, request) =>
    JSON.stringify({
      approvals: Array.from({ length: BATCH }, (_, i) => ({
        ...sampleApproval(request * BATCH + i),
        id: `${tag}-${request}-${i}`,
      })),
    }),
  );
}

async function measure(
  pool: Pool,
  server: ServerProcess,
  count: number,
  inFlight: number,
  request: (index: number) => LoadRequest,
): Promise<Throughput> {
  const before = await server.cpuMicros();
  const ms = await drive(pool, count, inFlight, request);
  const cpu = (await server.cpuMicros()) - before;
  return { rate: (count / ms) * 1000, cpu: cpu / count };
}

/**
 * A throughput row against its baseline: both variants warmed up, then `rounds` rounds of `requests` requests each,
 * alternating which goes first. The ratio is the median of the rounds' ratios of the two rates.
 */
/** A row's goal: its text, whether the subject's median ratio and rate meet it, and why a miss happens. */
interface Goal {
  goal: string;
  met: (measured: { ratio: number; rate: number }) => boolean;
  why: string;
}

async function throughputRows(
  label: string,
  baseline: Variant,
  subject: Variant,
  pools: Map<ServerProcess, Pool>,
  options: BackendBenchOptions,
  goal?: Goal,
): Promise<Row[]> {
  const runs = new Map<Variant, Throughput[]>([
    [baseline, []],
    [subject, []],
  ]);
  const run = (variant: Variant, count: number, tag: string) => {
    const server = variant.server();
    return measure(pools.get(server)!, server, count, options.inFlight, variant.requests(count, tag));
  };
  for (const variant of [baseline, subject]) await run(variant, Math.min(options.requests, 500), 'warm-up');
  const ratios: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? [baseline, subject] : [subject, baseline];
    for (const variant of order)
      runs.get(variant)!.push(await run(variant, options.requests, `round-${round}`));
    ratios.push(runs.get(subject)!.at(-1)!.rate / runs.get(baseline)!.at(-1)!.rate);
  }
  return [baseline, subject].map((variant) => {
    const measured = runs.get(variant)!;
    const rate = median(measured.map((m) => m.rate));
    const row: Row = {
      name: `${label}: ${variant.name}`,
      measurement:
        `${range(spread(measured.map((m) => m.rate)), whole)} req/s, ` +
        `${whole(median(measured.map((m) => m.cpu)))} µs CPU/req`,
      ratio: variant === baseline ? '1.00x (baseline)' : ratio(median(ratios)),
    };
    if (variant === subject && goal !== undefined) {
      Object.assign(row, { goal: goal.goal, met: goal.met({ ratio: median(ratios), rate }), why: goal.why });
    }
    return row;
  });
}

/**
 * A store of its own with `depth` tasks waiting, and a function that leases the next one and says how long that took
 * in milliseconds: the pick and the lease in their transaction, as a request runs them, without HTTP. After each
 * lease, untimed, the task is completed and a new one joins the queue, which keeps its depth.
 */
function queue(depth: number, leasedAhead: number): { lease: () => number; close: () => void } {
  const store = new Store({ now: Date.now });
  const systemId = store.transaction(() => {
    const org = store.organizations.create({});
    const system = store.systems.create(org.id, {});
    store.connectors.register(system.id, { taskTypes: ['approve'] });
    store.approvals.write(system.id, 'PO-1', { schemaId: 'po', approver: 'u' });
    // Older than every waiting task, and leased for longer than the run: the lease must pass over each of them.
    for (let i = 0; i < leasedAhead; i++) {
      store.tasks.create({ systemId: system.id, type: 'approve', approvalId: 'PO-1' });
      store.tasks.lease(system.id, 24 * 3_600_000);
    }
    for (let i = 0; i < depth; i++)
      store.tasks.create({ systemId: system.id, type: 'approve', approvalId: 'PO-1' });
    return system.id;
  });
  return {
    lease: () => {
      const started = performance.now();
      const task = store.transaction(() => store.tasks.lease(systemId, 60_000));
      const ms = performance.now() - started;
      if (task === null) throw new Error('the queue ran dry');
      store.transaction(() => {
        store.tasks.complete(systemId, task.id, { status: 'success' });
        store.tasks.create({ systemId, type: 'approve', approvalId: 'PO-1' });
      });
      return ms;
    },
    close: () => store.close(),
  };
}

/**
 * Microseconds per Get task lease at each depth, and with the deepest as many leased tasks ahead of the shallowest
 * queue, against the shallowest queue with nothing ahead; rounds interleave the queues, and the first one warms up.
 */
function leaseRows(options: BackendBenchOptions): Row[] {
  const deepest = Math.max(...options.leaseDepths);
  const shapes = [
    ...options.leaseDepths.map((depth) => ({ depth, leasedAhead: 0 })),
    { depth: options.leaseDepths[0]!, leasedAhead: deepest },
  ];
  const queues = shapes.map((shape) => ({
    ...shape,
    ...queue(shape.depth, shape.leasedAhead),
    micros: [] as number[],
  }));
  try {
    for (let round = 0; round < options.rounds + 1; round++) {
      for (const q of round % 2 === 0 ? queues : [...queues].reverse()) {
        let ms = 0;
        for (let i = 0; i < options.leases; i++) ms += q.lease();
        if (round > 0) q.micros.push((ms / options.leases) * 1000);
      }
    }
  } finally {
    for (const q of queues) q.close();
  }
  const baseline = median(queues[0]!.micros);
  return queues.map((q, index) => {
    const grown = median(q.micros) / baseline;
    const why =
      q.leasedAhead > 0
        ? 'the lease reads the tasks leased ahead of the first waiting one'
        : 'the lease reads more of the queue than its front';
    return {
      name:
        `backend: one Get task lease, ${whole(q.depth)} waiting` +
        (q.leasedAhead > 0 ? ` behind ${whole(q.leasedAhead)} leased` : ''),
      measurement: `${range(spread(q.micros), (value) => value.toFixed(1))} µs`,
      ratio: index === 0 ? '1.00x (baseline)' : `${ratio(grown)} time`,
      ...(q.depth === deepest || q.leasedAhead > 0 ? { goal: 'flat (≤ 1.5x)', met: grown <= 1.5, why } : {}),
    };
  });
}

/** Milliseconds from the call to a listening server, for the reference backend and a bare fastify app. */
async function startRows(options: BackendBenchOptions): Promise<Row[]> {
  const variants = [
    {
      name: 'bare fastify, one route',
      start: async () => {
        const app = Fastify();
        app.get('/', async () => ({ status: 'success' }));
        await app.listen({ port: 0, host: '127.0.0.1' });
        return () => app.close();
      },
    },
    {
      name: 'startReferenceBackend()',
      start: async () => {
        const backend = await startReferenceBackend();
        return () => backend.close();
      },
    },
  ];
  const times = new Map(variants.map((variant) => [variant, [] as number[]]));
  for (let round = 0; round < options.rounds + 1; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      for (let i = 0; i < options.starts; i++) {
        const started = performance.now();
        const close = await variant.start();
        const ms = performance.now() - started;
        await close();
        // The first round warms up.
        if (round > 0) times.get(variant)!.push(ms);
      }
    }
  }
  const baseline = median(times.get(variants[0]!)!);
  return variants.map((variant, index) => {
    const ms = median(times.get(variant)!);
    return {
      name: `backend: start, ${variant.name}`,
      measurement: `${range(spread(times.get(variant)!), (value) => value.toFixed(1))} ms`,
      ratio: index === 0 ? '1.00x (baseline)' : `${ratio(ms / baseline)} time`,
      ...(index === 0
        ? {}
        : { goal: '≤ 10 ms', met: ms <= 10, why: 'opening the store and its schema takes longer' }),
    };
  });
}

/**
 * The reference backend's rows, each against its baseline in the same run. Request throughput is measured from this
 * process against servers in their own processes (the reference backend, and a bare fastify app as the baseline),
 * over loopback keep-alive connections; the CPU time per request is the server process's own. The lease and the
 * start are timed in this process.
 */
export async function benchBackend(options: BackendBenchOptions): Promise<Row[]> {
  if (options.users <= 4242)
    throw new Error(`users must be at least 4,243 for the search to match, got ${options.users}`);
  const [reference, bare] = await Promise.all([
    startServerProcess('reference', options.users),
    startServerProcess('bare'),
  ]);
  const pools = new Map(
    [reference, bare].map((server) => [server, new Pool(server.url, { connections: options.inFlight })]),
  );
  const v2 = { authorization: `Bearer ${reference.fixture.connectorToken}` };
  const v1 = { authorization: `Bearer ${reference.fixture.managementToken}` };
  const json = { 'content-type': 'application/json' };
  const put = (server: () => ServerProcess, name: string): Variant => ({
    name,
    server,
    requests: (count, tag) => {
      const bodies = putBodies(count, `${name}-${tag}`);
      return (index) => ({
        method: 'PUT',
        path: '/v2/rawapprovals',
        headers: { ...v2, ...json },
        body: bodies[index],
      });
    },
  });
  const getTask = (server: () => ServerProcess, name: string): Variant => ({
    name,
    server,
    requests: () => () => ({ method: 'GET', path: '/v2/connector/tasks', headers: v2 }),
  });
  const getUsers = (name: string, query: string): Variant => ({
    name,
    server: () => reference,
    requests: () => () => ({ method: 'GET', path: `/v1/users?${query}`, headers: v1 }),
  });
  const searchGoal = (why: string): Goal => ({ goal: '≥ 500 req/s', met: ({ rate }) => rate >= 500, why });
  let matches = 0;
  for (let i = 0; i < options.users; i++) if (`Last${i}`.includes(SEARCH_TERM)) matches++;
  try {
    return [
      ...(await throughputRows(
        `backend: PUT ${BATCH} approvals`,
        put(() => bare, 'bare fastify parsing the same bodies'),
        put(() => reference, 'reference backend'),
        pools,
        options,
        {
          goal: '≥ 0.5x',
          met: ({ ratio }) => ratio >= 0.5,
          why: 'each approval is checked, stored in SQLite and indexed; see the profile',
        },
      )),
      ...(await throughputRows(
        'backend: Get task, none waiting',
        getTask(() => bare, 'bare fastify constant answer'),
        getTask(() => reference, 'reference backend'),
        pools,
        options,
        { goal: '≥ 0.5x', met: ({ ratio }) => ratio >= 0.5, why: 'authentication and the lease query' },
      )),
      ...(await throughputRows(
        `backend: Get users, page of 10, ${whole(options.users)} users`,
        getUsers('without search', 'page=1&limit=10'),
        getUsers(
          `search '${SEARCH_TERM}' in 3 fields (${matches} ${matches === 1 ? 'match' : 'matches'})`,
          `search=${SEARCH_TERM}&searchableFields=firstName,lastName,email&page=1&limit=10`,
        ),
        pools,
        options,
        searchGoal('the trigram lookup and the page of matches cost more than that on this machine'),
      )),
      ...(await throughputRows(
        `backend: Get users, page of 10, ${whole(options.users)} users`,
        getUsers('without search', 'page=1&limit=10'),
        getUsers(
          `search '${SHORT_TERM}' (under 3 characters: every user tested, no match) in 3 fields`,
          `search=${SHORT_TERM}&searchableFields=firstName,lastName,email&page=1&limit=10`,
        ),
        pools,
        // A tenth of the requests: each reads the whole organization, and the row should not hold up the run.
        { ...options, requests: Math.ceil(options.requests / 10) },
        searchGoal('a term under 3 characters has no trigram to look up, so every user is tested'),
      )),
      ...leaseRows(options),
      ...(await startRows(options)),
    ];
  } finally {
    await Promise.all([...pools.values()].map((pool) => pool.close()));
    await Promise.all([reference.close(), bare.close()]);
  }
}
