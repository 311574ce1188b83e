/**
 * The soak's worker: a connector process as a user runs one
 * (`process.exitCode = await runConnector(connector, options)`),
 * syncing the generated source through the fault proxy. The driver starts it with its settings in the environment
 * variable `SOAK_WORKER` (JSON, see {@link WorkerSettings}), kills it, and starts it again; the version of the
 * source it reads is whatever the driver last wrote into the version file, read again at the start of each run.
 * @module
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  type ChangeWindow,
  Connector,
  type IncrementalSource,
  incremental,
  type SourceApproval,
  task,
} from '../../src/index.js';
import { parseOptions } from '../../src/internal/options.js';
import { runConnector } from '../../src/worker/index.js';
import { VersionedSource } from './source.js';

/** What the driver tells a worker. */
export const WorkerSettings = z.object({
  /** The fault proxy's URL. */
  baseUrl: z.string(),
  token: z.string(),
  source: z.object({
    seed: z.number().int(),
    approvals: z.number().int(),
    versions: z.number().int(),
    changeRate: z.number(),
  }),
  /** The file holding the version of the source, a decimal number. */
  versionFile: z.string(),
  sync: z.object({
    batchSize: z.number().int(),
    concurrency: z.number().int(),
    ordered: z.boolean(),
    overlapMs: z.number().int(),
  }),
  logLevel: z.enum(['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace']),
});
export type WorkerSettings = z.infer<typeof WorkerSettings>;

/**
 * An incremental connector over the generated source, which yields in `(lastModified, id)` order; whether it says
 * so (`ordered`) is the driver's choice.
 */
class SoakConnector extends Connector {
  readonly tasks = {
    approve: task({
      input: z.object({ approval: z.object({ id: z.string() }) }),
      run: async () => {
        throw new Error('the soak creates no tasks');
      },
    }),
  };
  readonly source: IncrementalSource;
  readonly #generated: VersionedSource;
  readonly #versionFile: string;

  constructor(settings: Pick<WorkerSettings, 'source' | 'versionFile'>, ordered: boolean) {
    super();
    this.#generated = new VersionedSource(settings.source);
    this.#versionFile = settings.versionFile;
    this.source = incremental({ ordered, changes: (window) => this.#changes(window) });
  }

  async *#changes(window: ChangeWindow): AsyncIterable<SourceApproval> {
    const version = Number(readFileSync(this.#versionFile, 'utf8'));
    yield* this.#generated.changesSince(version, window.since?.getTime());
  }
}

const settings = parseOptions(
  WorkerSettings,
  JSON.parse(process.env.SOAK_WORKER ?? '{}'),
  'soak worker settings',
  ['token'],
);
const { ordered, ...sync } = settings.sync;
process.exitCode = await runConnector(new SoakConnector(settings, ordered), {
  service: {
    baseUrl: settings.baseUrl,
    token: settings.token,
    // Few and short retries, so that faults in a row sometimes fail a call, and with it a sync run.
    retry: { retries: 2, baseDelayMs: 20, maxDelayMs: 200, maxRetryTimeMs: 5_000 },
  },
  logger: { level: settings.logLevel },
  sync: { ...sync, schedule: 200, runOnStart: true, reconcileSchedule: false },
  shutdown: { graceMs: 2_000, forceMs: 1_000 },
});
