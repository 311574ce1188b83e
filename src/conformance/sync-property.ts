/**
 * The generated sync check: fast-check draws sequences of source changes and sync runs, each run cut off at a
 * request of its choosing (before or after the service has it) or let finish; after the sequence one more run must
 * converge on the source, and every state write along the way must keep the cursor's promises. A failing sequence
 * is shrunk to the smallest that still fails, and reproduces from the seed.
 * @module
 */
import fc from 'fast-check';
import { type CheckEnvironment, expectRun } from './check.js';
import { CursorWatch } from './cursor-watch.js';
import { ConformanceFailure, messageOf } from './report.js';
import { Stage } from './stage.js';
import { newDriver } from './subject.js';
import { type CrashPoint, isPush, type WireListener } from './wire.js';

/** One step of a generated sequence. */
export type SyncStep =
  | { step: 'create'; title: string }
  | { step: 'change'; pick: number; title: string }
  | { step: 'resolve'; pick: number }
  | { step: 'delete'; pick: number }
  | { step: 'tie'; creates: number; pick: number }
  | { step: 'sync'; crash: CrashPoint | null; batchSize: number; changeDuring: boolean; restart: boolean };

/** The furthest request of a worker a crash point counts to, by number: its start and a short run. */
const REQUESTS_PER_RUN = 14;

function steps(can: { delete: boolean; tie: boolean }): fc.Arbitrary<SyncStep[]> {
  const title = fc.string({ minLength: 1, maxLength: 12 }).map((text) => `Request ${text}`);
  const pick = fc.nat({ max: 20 });
  const options: fc.Arbitrary<SyncStep>[] = [
    fc.record({ step: fc.constant('create' as const), title }),
    fc.record({ step: fc.constant('change' as const), pick, title }),
    fc.record({ step: fc.constant('resolve' as const), pick }),
    fc.record({
      step: fc.constant('sync' as const),
      crash: fc.option(
        fc.oneof(
          fc.record({ at: fc.constant('push' as const), nth: fc.nat({ max: 3 }), after: fc.boolean() }),
          fc.record({ at: fc.constant('state' as const), nth: fc.nat({ max: 2 }), after: fc.boolean() }),
          fc.record({
            at: fc.constant('request' as const),
            nth: fc.nat({ max: REQUESTS_PER_RUN }),
            after: fc.boolean(),
          }),
        ),
        { nil: null },
      ),
      batchSize: fc.integer({ min: 1, max: 3 }),
      changeDuring: fc.boolean(),
      // A run on the process's connector instance, or on a new one (a restart); a crash always gives a new one.
      restart: fc.boolean(),
    }),
  ];
  if (can.delete) options.push(fc.record({ step: fc.constant('delete' as const), pick }));
  if (can.tie) {
    options.push(
      fc.record({ step: fc.constant('tie' as const), creates: fc.integer({ min: 2, max: 5 }), pick }),
    );
  }
  return fc.array(fc.oneof(...options), { minLength: 1, maxLength: 10 });
}

/** A sequence being played: its stage, the requests still in the source, and a counter that makes titles unique. */
class Player {
  readonly stage: Stage;
  readonly watch: CursorWatch | undefined;
  readonly #live: string[] = [];
  #counter = 0;

  constructor(stage: Stage, watch: CursorWatch | undefined) {
    this.stage = stage;
    this.watch = watch;
  }

  #chosen(pick: number): string | undefined {
    return this.#live.length === 0 ? undefined : this.#live[pick % this.#live.length];
  }

  #title(title: string): string {
    return `${title} #${this.#counter++}`;
  }

  async #create(title: string): Promise<void> {
    this.#live.push(await this.stage.create(this.#title(title)));
  }

  async #change(pick: number, title: string): Promise<void> {
    const id = this.#chosen(pick);
    if (id !== undefined) await this.stage.driver.change(id, { title: this.#title(title) });
  }

  async play(step: SyncStep): Promise<void> {
    const { stage } = this;
    switch (step.step) {
      case 'create':
        return this.#create(step.title);
      case 'change':
        return this.#change(step.pick, step.title);
      case 'resolve': {
        const id = this.#chosen(step.pick);
        if (id !== undefined) await stage.driver.resolve(id);
        return;
      }
      case 'delete': {
        const id = this.#chosen(step.pick);
        if (id === undefined) return;
        await stage.delete(id);
        this.#live.splice(this.#live.indexOf(id), 1);
        return;
      }
      case 'tie':
        await stage.driver.sameInstant?.(async () => {
          for (let index = 0; index < step.creates; index += 1) await this.#create('Tied');
          await this.#change(step.pick, 'Tied change');
        });
        return;
      case 'sync':
        return this.#sync(step);
    }
  }

  async #sync(step: Extract<SyncStep, { step: 'sync' }>): Promise<void> {
    let changed = !step.changeDuring;
    const during: WireListener = {
      request: async (request) => {
        if (changed || !isPush(request)) return;
        changed = true;
        await this.#change(this.#counter, 'Changed during a run');
      },
    };
    await this.stage.syncRun({
      ...(step.crash === null ? {} : { crash: step.crash }),
      listener: this.watch?.listener(during) ?? during,
      options: { sync: { batchSize: step.batchSize } },
      restart: step.restart,
    });
  }
}

/** Plays one sequence on a fresh stage; throws a {@link ConformanceFailure} at the first broken promise. */
async function play(environment: CheckEnvironment, sequence: readonly SyncStep[]): Promise<void> {
  const stage = await Stage.open(environment.backend, environment.subject, {
    lifetime: 'process',
    clock: environment.nextClock(),
  });
  const watch = environment.source.savesCursor ? new CursorWatch(stage) : undefined;
  const player = new Player(stage, watch);
  try {
    for (const step of sequence) await player.play(step);
    await expectRun(
      stage.syncRun({ ...(watch === undefined ? {} : { listener: watch.listener() }) }),
      'the run after the sequence',
    );
    await environment.expectExact(stage, ' after the sequence and one more run');
    watch?.expectKept();
  } finally {
    await stage.close();
  }
}

/**
 * Sequences played before the drawn ones, whatever the seed: more requests than a page, then a run cut off at its
 * first push (before the service has it, batches of 1) or right after its first state write (batches of 2), and a
 * run cut off after its second push. Where progress of the connector's own is saved before the service has what was
 * read, one of them loses requests under every seed.
 */
function canonical(): SyncStep[][] {
  const creates = Array.from({ length: 7 }, (_, index) => ({
    step: 'create' as const,
    title: `Request ${index}`,
  }));
  const cut = (crash: CrashPoint, batchSize: number): SyncStep => ({
    step: 'sync',
    crash,
    batchSize,
    changeDuring: false,
    restart: false,
  });
  return [
    [...creates, cut({ at: 'push', nth: 0, after: false }, 1)],
    [...creates, cut({ at: 'state', nth: 0, after: true }, 2)],
    [...creates, cut({ at: 'push', nth: 1, after: true }, 2)],
  ];
}

export async function syncProperty(environment: CheckEnvironment): Promise<void> {
  const { driver: probe } = await newDriver(environment.subject);
  const can = { delete: probe.delete !== undefined, tie: probe.sameInstant !== undefined };
  await probe.close?.();
  const property = fc.asyncProperty(steps(can), (sequence) => play(environment, sequence));
  const details = await fc.check(property, {
    seed: environment.seed,
    numRuns: environment.numRuns,
    examples: canonical().map((sequence) => [sequence]),
  });
  if (!details.failed) return;
  const error = details.errorInstance;
  const counterexample = fc.stringify(details.counterexample?.[0]);
  if (error instanceof ConformanceFailure) {
    throw new ConformanceFailure(error.expected, error.happened, counterexample);
  }
  throw new ConformanceFailure('the sequence to run', messageOf(error), counterexample);
}
