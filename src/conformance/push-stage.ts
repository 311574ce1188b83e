/**
 * A stage for the push checks: one worker with the push path on, running for the whole check, and the source
 * delivering its events to the battery's relay, which passes them on to the worker's ingress as the check says.
 * @module
 */
import type { ConnectorWorker } from '../worker/index.js';
import { type CheckEnvironment, requires } from './check.js';
import type { PushDriver } from './driver.js';
import { DeliveryRelay, type HeldDelivery, passOn } from './push-relay.js';
import { CheckErrored, ConformanceFailure, messageOf } from './report.js';
import type { Stage } from './stage.js';
import { labelled } from './subject.js';

/** How long a push check waits for the worker to register the webhook of a connector that registers its own. */
const REGISTRATION_WAIT_MS = 10_000;

/** The metric that counts the ingress's deliveries by outcome (docs/operations.md). */
const DELIVERIES_METRIC = 'approval_connector_push_deliveries_total';

const SECRET_CHARACTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A webhook secret drawn from the seed: what the source signs with and the worker verifies with. */
function secretOf(random: () => number): string {
  return Array.from(
    { length: 32 },
    () => SECRET_CHARACTERS[Math.floor(random() * SECRET_CHARACTERS.length)],
  ).join('');
}

/** A stage whose worker has the push path on, its source delivering to the battery. */
export class PushStage {
  readonly stage: Stage;
  readonly environment: CheckEnvironment;
  readonly #worker: ConnectorWorker;
  readonly #relay: DeliveryRelay;
  readonly #push: PushDriver;
  readonly #ingress: string;

  private constructor(
    environment: CheckEnvironment,
    stage: Stage,
    parts: { worker: ConnectorWorker; relay: DeliveryRelay; push: PushDriver; ingress: string },
  ) {
    this.environment = environment;
    this.stage = stage;
    this.#worker = parts.worker;
    this.#relay = parts.relay;
    this.#push = parts.push;
    this.#ingress = parts.ingress;
  }

  /**
   * A stage of the environment with its worker started (`delayMs`, how long after a delivery its lookup starts), the push path on and listening, and the source told to
   * deliver to the battery. Skips the check for a connector without a push path, or a driver without `push`.
   */
  static async open(environment: CheckEnvironment, settings: { delayMs?: number } = {}): Promise<PushStage> {
    requires(environment.declared.push, 'the source declares no push path');
    const stage = await environment.stage();
    const push = stage.driver.push;
    requires(push, 'the driver has no push: it cannot make the source deliver events');
    const relay = stage.own(await DeliveryRelay.open());
    const secret = secretOf(environment.random);
    await labelled('push.deliverTo', () => push.deliverTo({ url: relay.url, secret }));
    const { worker } = await stage.start({
      options: {
        push: {
          port: 0,
          host: '127.0.0.1',
          secret,
          publicUrl: relay.url,
          // A delivery's lookup soon after it, and a change no event announced judged missed as a run ends.
          delayMs: settings.delayMs ?? 10,
          missedGraceMs: 0,
        },
      },
    });
    const ingress = worker.pushHealth?.url;
    if (ingress === undefined) {
      throw new CheckErrored('the worker opened no push ingress for a connector that declares a push path');
    }
    if (environment.declared.webhook) await registered(worker);
    return new PushStage(environment, stage, { worker, relay, push, ingress });
  }

  /** A sync run of the running worker, which must succeed. */
  async sync(what: string): Promise<void> {
    try {
      await this.#worker.syncNow();
    } catch (error) {
      throw new ConformanceFailure(`${what} to succeed`, `it failed: ${messageOf(error)}`);
    }
  }

  /**
   * The deliveries the source made since the last call, once it says it has sent them all: those of `what`, the
   * change made since. None is the driver's error, unless `none` allows it.
   */
  async deliveries(what: string, none: 'allowed' | 'error' = 'error'): Promise<HeldDelivery[]> {
    await labelled('push.sent', () => this.#push.sent());
    const taken = this.#relay.take();
    if (taken.length === 0 && none === 'error') {
      throw new CheckErrored(
        `the source delivered nothing for ${what}: the driver's push.sent() resolved, and no delivery had come to the address push.deliverTo() was given`,
      );
    }
    return taken;
  }

  /** Drops what the source has delivered so far (the creations a first sync run brings anyway). */
  async discard(): Promise<void> {
    await this.deliveries('', 'allowed');
  }

  /**
   * Passes genuine deliveries on to the worker, one after the other, each `times` times at once (the retries of a
   * source that did not hear the answer). Every one must be taken: a refusal of one the source signed means the
   * push path refuses the source itself.
   */
  async pass(deliveries: readonly HeldDelivery[], what: string, times = 1): Promise<void> {
    for (const delivery of deliveries) {
      const statuses = await Promise.all(
        Array.from({ length: times }, () => passOn(this.#ingress, delivery)),
      );
      const refused = statuses.find((status) => status < 200 || status > 299);
      if (refused !== undefined) {
        throw new ConformanceFailure(
          `the worker to take every delivery the source made and signed (${what})`,
          `its ingress answered ${refused}${refused === 401 ? ': verify() refused a delivery the source signed with the secret the worker has' : ''}`,
        );
      }
    }
  }

  /** Posts a delivery to the worker's ingress, and answers the status it gave. */
  post(delivery: HeldDelivery): Promise<number> {
    return passOn(this.#ingress, delivery);
  }

  /** Resolves once the worker has looked up and pushed (or dropped) every delivery it took. */
  settled(): Promise<void> {
    return this.#worker.pushSettled();
  }

  /** The changes the worker's sync runs found that no event announced, since it started. */
  get missed(): number {
    const health = this.#worker.pushHealth;
    if (health === undefined) throw new CheckErrored('the worker reports no push health');
    return health.missed;
  }

  /** How many requests the ingress answered with `outcome`, as its metric counts them. */
  async counted(outcome: 'accepted' | 'refused' | 'duplicate'): Promise<number> {
    const metric = this.#worker.metrics.registry.getSingleMetric(DELIVERIES_METRIC);
    if (metric === undefined) throw new CheckErrored(`the worker has no metric ${DELIVERIES_METRIC}`);
    const { values } = await metric.get();
    return values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
  }

  /** The service against the source, where a request deleted from the source must be `deleted`. */
  expectExact(context: string, deleted: 'resolved' | 'any' = 'any'): Promise<void> {
    const { listsOpenOnly } = this.environment.source;
    return this.stage.expectExact(listsOpenOnly ? 'resolved' : deleted, listsOpenOnly, context);
  }
}

/**
 * Waits until the worker has registered the connector's webhook (it does at start), so that the source delivers
 * to the battery from the first change on.
 */
async function registered(worker: ConnectorWorker): Promise<void> {
  const until = performance.now() + REGISTRATION_WAIT_MS;
  for (;;) {
    const state = worker.pushHealth?.webhook?.state;
    if (state === 'registered') return;
    if (state === 'failed' || performance.now() > until) {
      throw new ConformanceFailure(
        "the worker to register the push path's webhook at the address it was given (push.publicUrl)",
        state === 'failed'
          ? 'webhook.register() failed, after the kit had retried it'
          : `it was still ${state ?? 'not started'} after ${REGISTRATION_WAIT_MS / 1000} s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
