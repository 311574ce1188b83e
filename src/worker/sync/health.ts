/**
 * What the sync's runs say of its health, for `/readyz`, the metrics and the logs: how the last run ended, the runs
 * that failed in a row, and whether the cursor keeps up with the changes the source yields (its age, and whether it
 * counts as frozen). See `docs/operations.md`, "Stalls".
 * @module
 */
import type { PinoLogger, ReadinessCheck, SyncMode, SyncOutcome } from '../operations/index.js';
import { type CursorKey, compareKeys, cursorOfKey } from './cursor.js';
import type { StateStore } from './state.js';

/** How a sync run ended, and when (epoch milliseconds of the worker's clock). */
interface RunEnd {
  mode: SyncMode;
  outcome: SyncOutcome;
  at: number;
}

/** The cursor's age: how long changes past it have waited for it, and whether that counts as frozen. */
export interface CursorReading {
  ageMs: number;
  frozen: boolean;
}

/** What a {@link SyncHealth} reads and where it writes. */
export interface SyncHealthParts {
  state: StateStore<object>;
  logger: PinoLogger;
  now: () => number;
  /** How long changes may wait past the cursor before it counts as frozen: `sync.frozenCursorMs`. */
  frozenCursorMs: number;
  /** Whether this worker runs the sync of an incremental source, whose cursor it watches. */
  watchesCursor: boolean;
  /** Whether this worker syncs at all (its role); lookups after tasks run in any role. */
  syncs: boolean;
}

/**
 * The health of the sync, as its runs report it.
 *
 * The **cursor's age** is how long changes past the saved cursor have waited for it: from the later of the time a
 * run of this worker first read a record after the saved cursor (in `(lastModified, id)` order) that the cursor has
 * not reached since, and the time the cursor last moved; `0` while no such record waits. So a quiet source never
 * ages the cursor, a run that reads changes and saves the cursor over them ends the wait, and a cursor that stays
 * behind records the source keeps yielding (runs that fail or are interrupted before the cursor passes them, a
 * record the service refuses, a cursor that cannot be saved) ages until it counts as **frozen**, at
 * `frozenCursorMs`. An unordered source's cursor moves only at the end of a run, so a run's length ages it too.
 */
export class SyncHealth {
  readonly #parts: SyncHealthParts;
  readonly #failuresInARow = new Map<SyncMode, number>();
  #lastRun: RunEnd | undefined;
  #lastSuccess: RunEnd | undefined;
  /** The newest record read past the saved cursor, and since when one has waited. */
  #waiting: { key: CursorKey; since: number } | undefined;
  #frozen = false;

  constructor(parts: SyncHealthParts) {
    this.#parts = parts;
  }

  /** An incremental run read this record: a change that waits for the cursor if it is past the saved one. */
  read(key: CursorKey): void {
    const saved = this.#parts.state.saved.key;
    if (saved !== undefined && compareKeys(key, saved) <= 0) return;
    if (this.#waiting === undefined) this.#waiting = { key, since: this.#parts.now() };
    else if (compareKeys(key, this.#waiting.key) > 0) this.#waiting.key = key;
  }

  /** A run ended: counts its outcome, and checks the cursor. An interrupted run neither fails nor succeeds. */
  ended(mode: SyncMode, outcome: SyncOutcome): void {
    const end = { mode, outcome, at: this.#parts.now() };
    this.#lastRun = end;
    if (outcome === 'success') {
      this.#lastSuccess = end;
      this.#failuresInARow.set(mode, 0);
    } else if (outcome === 'failure') {
      this.#failuresInARow.set(mode, (this.#failuresInARow.get(mode) ?? 0) + 1);
    }
    this.cursor();
  }

  /** Runs that failed in a row since their mode last succeeded, by the modes that ran. */
  failuresInARow(): ReadonlyMap<SyncMode, number> {
    return this.#failuresInARow;
  }

  /**
   * The cursor's age now, and whether it is frozen; `undefined` where this worker watches no cursor. Logs the
   * moment it is found frozen, and the moment it moves again.
   */
  cursor(): CursorReading | undefined {
    if (!this.#parts.watchesCursor) return undefined;
    const { key: saved, movedAt } = this.#parts.state.saved;
    const waiting = this.#waiting;
    if (waiting !== undefined && saved !== undefined && compareKeys(waiting.key, saved) <= 0) {
      this.#waiting = undefined;
    }
    const now = this.#parts.now();
    const ageMs =
      this.#waiting === undefined ? 0 : Math.max(0, now - Math.max(this.#waiting.since, movedAt ?? 0));
    this.#noteFrozen(ageMs >= this.#parts.frozenCursorMs, ageMs);
    return { ageMs, frozen: this.#frozen };
  }

  /** The `sync` part of `/readyz`: how the last run ended, and the runs that failed in a row. */
  syncCheck(): ReadinessCheck {
    const lastRun = this.#lastRun;
    if (!this.#parts.syncs && lastRun === undefined) return { status: 'off' };
    const failing = [...this.#failuresInARow.values()].some((count) => count > 0);
    return {
      status: failing ? 'failing' : 'ok',
      lastRun: this.#shown(lastRun),
      lastSuccess: this.#shown(this.#lastSuccess),
      failuresInARow: Object.fromEntries(this.#failuresInARow),
    };
  }

  /** The `cursor` part of `/readyz`: the saved cursor's instant, its age, and whether it is frozen. */
  cursorCheck(): ReadinessCheck {
    const reading = this.cursor();
    if (reading === undefined) return { status: 'off' };
    const { key, movedAt } = this.#parts.state.saved;
    return {
      status: reading.frozen ? 'frozen' : 'ok',
      lastModified: key === undefined ? null : new Date(key.at).toISOString(),
      movedAt: movedAt === undefined ? null : new Date(movedAt).toISOString(),
      ageSeconds: Math.round(reading.ageMs) / 1000,
      frozenAfterSeconds: this.#parts.frozenCursorMs / 1000,
    };
  }

  #shown(run: RunEnd | undefined): Record<string, unknown> | null {
    if (run === undefined) return null;
    const { mode, outcome, at } = run;
    const ageSeconds = Math.round(Math.max(0, this.#parts.now() - at)) / 1000;
    return { mode, outcome, finishedAt: new Date(at).toISOString(), ageSeconds };
  }

  #noteFrozen(frozen: boolean, ageMs: number): void {
    if (frozen === this.#frozen) return;
    this.#frozen = frozen;
    const { state, logger, frozenCursorMs } = this.#parts;
    const saved = state.saved.key;
    const cursor = saved === undefined ? null : cursorOfKey(saved);
    if (frozen) {
      logger.error(
        { cursor, ageMs: Math.round(ageMs), frozenCursorMs },
        'the sync cursor is frozen: changes past it have waited longer than sync.frozenCursorMs',
      );
    } else {
      logger.info({ cursor }, 'the sync cursor moves again');
    }
  }
}
