/**
 * The gauges of stalls: what only the sync and the task poller know (failures in a row, the cursor's age, the lease
 * age), read from them at each scrape. Part of the connector's metrics (`metrics.ts`); listed in
 * `docs/operations.md`, "Stalls".
 * @module
 */
import { Gauge, type Registry } from 'prom-client';

/**
 * What the stall gauges read at each scrape, from the parts that know it. Each reads `undefined` (the gauge is then
 * absent) where its part does not run in this worker.
 */
export interface StallReadings {
  /** Sync runs that failed in a row since their mode last succeeded, by the modes that ran. */
  syncFailuresInARow(): ReadonlyMap<string, number>;
  /** How long changes past the sync cursor have waited for it, and whether it counts as frozen. */
  cursor(): { ageMs: number; frozen: boolean } | undefined;
  /** Milliseconds since the task poller's last successful lease request, while it polls. */
  leaseAgeMs(): number | undefined;
}

const NO_READINGS: StallReadings = {
  syncFailuresInARow: () => new Map(),
  cursor: () => undefined,
  leaseAgeMs: () => undefined,
};

/** The names of the stall gauges, without the prefix of every metric's name: those {@link StallGauges} registers. */
export const STALL_GAUGE_NAMES = [
  'sync_consecutive_failures',
  'sync_cursor_age_seconds',
  'sync_cursor_frozen',
  'lease_age_seconds',
] as const;

/** The stall gauges, registered on a registry, reading the parts last given to {@link read}. */
export class StallGauges {
  #readings: StallReadings = NO_READINGS;

  constructor(registry: Registry, prefix: string) {
    const registers = [registry];
    const failures: Gauge<'mode'> = new Gauge({
      name: `${prefix}sync_consecutive_failures`,
      help: 'Sync runs that failed in a row since their mode last succeeded, by mode; an interrupted run changes nothing.',
      labelNames: ['mode'] as const,
      registers,
      collect: () =>
        readInto(
          failures,
          () => this.#readings.syncFailuresInARow(),
          (counts) => {
            for (const [mode, count] of counts) failures.set({ mode }, count);
          },
        ),
    });
    const age: Gauge = new Gauge({
      name: `${prefix}sync_cursor_age_seconds`,
      help: 'Seconds that changes past the sync cursor have waited for it; 0 while none waits, absent without a cursor to watch.',
      registers,
      collect: () =>
        readInto(
          age,
          () => this.#readings.cursor()?.ageMs,
          (ms) => age.set(ms / 1000),
        ),
    });
    const frozen: Gauge = new Gauge({
      name: `${prefix}sync_cursor_frozen`,
      help: '1 while changes past the sync cursor have waited longer than sync.frozenCursorMs, 0 otherwise; absent without a cursor to watch.',
      registers,
      collect: () =>
        readInto(
          frozen,
          () => this.#readings.cursor()?.frozen,
          (on) => frozen.set(on ? 1 : 0),
        ),
    });
    const lease: Gauge = new Gauge({
      name: `${prefix}lease_age_seconds`,
      help: 'Seconds since the task poller last leased a task or heard that none was waiting; absent while it does not poll.',
      registers,
      collect: () =>
        readInto(
          lease,
          () => this.#readings.leaseAgeMs(),
          (ms) => lease.set(ms / 1000),
        ),
    });
  }

  /** Reads these parts from now on, in place of any read before. */
  read(readings: StallReadings): void {
    this.#readings = readings;
  }
}

/**
 * Sets a gauge from its reading, or leaves it absent while the reading is `undefined` or throws: a scrape must not
 * fail for one reading.
 */
function readInto<Value, Label extends string>(
  gauge: Gauge<Label>,
  reading: () => Value | undefined,
  apply: (value: Value) => void,
): void {
  let value: Value | undefined;
  try {
    value = reading();
  } catch {
    value = undefined;
  }
  gauge.reset();
  // Absent rather than 0: reset() sets a gauge without labels to 0.
  if (value === undefined) gauge.remove();
  else apply(value);
}
