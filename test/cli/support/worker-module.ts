/**
 * A connector module as `connector run` loads it, as a project would write one: its default export builds the
 * connector from the worker's environment. Its source holds `SOURCE_APPROVALS` approvals (`S-1`, …; 2 by default);
 * its one task type, `approve`, logs `handler started`, takes `HANDLER_MS` (0 by default, cut short when its signal
 * is aborted) and then appends the task's id to the file `ACTIONS_FILE` names, if any, one id a line: the record of
 * every action run, across processes. Building it logs `building the connector`, waits `BUILD_MS` (0 by default),
 * then fails if `BUILD_FAILS` says so: `validation` (a `ValidationError`, as a check of the module's own variables
 * would throw) or `error`. With `SOURCE_LOOKUP=true`, the source has a `lookup()`, and an approval a task decided
 * reads resolved there.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { ValidationError } from '../../../src/errors.js';
import {
  Connector,
  type ConnectorFactory,
  type ConnectorSource,
  incremental,
  type SourceApproval,
  task,
} from '../../../src/index.js';
import { sleep } from '../../../src/internal/wait.js';

interface Settings {
  approvals: number;
  handlerMs: number;
  actionsFile: string | undefined;
  lookup?: boolean;
}

export class FixtureConnector extends Connector {
  readonly tasks = {
    approve: task({
      input: z.object({ approval: z.object({ id: z.string() }) }),
      run: async ({ approval }, { taskId, signal, logger }) => {
        // What a test waits for before it stops the worker mid-task: the task reads leased in the service before its
        // answer reaches the worker.
        logger.info('handler started');
        if (this.settings.handlerMs > 0) await sleep(this.settings.handlerMs, signal);
        if (this.settings.actionsFile !== undefined) appendFileSync(this.settings.actionsFile, `${taskId}\n`);
        this.#decided.add(approval.id);
      },
    }),
  };
  readonly source: ConnectorSource;
  /** The approvals the tasks decided: resolved in the source from then on. */
  readonly #decided = new Set<string>();

  constructor(private readonly settings: Settings) {
    super();
    const changes = () => this.#changes();
    this.source = settings.lookup
      ? incremental({ changes, lookup: (ids) => this.#lookup(ids) })
      : incremental({ changes });
  }

  async *#lookup(ids: readonly string[]): AsyncIterable<SourceApproval> {
    for (const id of ids) {
      if (!this.#decided.has(id)) continue;
      yield { id, schemaId: 'po', approver: 'ada', resolved: true, lastModified: new Date(), data: {} };
    }
  }

  async *#changes(): AsyncIterable<SourceApproval> {
    for (let n = 1; n <= this.settings.approvals; n += 1) {
      yield {
        id: `S-${n}`,
        schemaId: 'po',
        approver: 'ada',
        resolved: false,
        lastModified: new Date(Date.UTC(2026, 4, 1, 10, 0, n)),
        data: { title: `Request S-${n}` },
      };
    }
  }
}

const build: ConnectorFactory = async ({ env, logger }) => {
  logger.info('building the connector');
  await sleep(Number(env.BUILD_MS ?? 0));
  if (env.BUILD_FAILS === 'validation') {
    throw new ValidationError('source settings', [
      { code: 'custom', path: ['SOURCE_URL'], message: 'Expected `SOURCE_URL` to be set, got nothing' },
    ]);
  }
  if (env.BUILD_FAILS === 'error') throw new Error('the source cannot be reached');
  return new FixtureConnector({
    approvals: Number(env.SOURCE_APPROVALS ?? 2),
    handlerMs: Number(env.HANDLER_MS ?? 0),
    actionsFile: env.ACTIONS_FILE,
    lookup: env.SOURCE_LOOKUP === 'true',
  });
};
export default build;
