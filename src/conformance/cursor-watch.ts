/**
 * Watches every state write a worker sends, at the moment it is sent: the cursor it carries must not be before the
 * one the service holds, must be the position of a change the source made, and everything of the source at or
 * before it must already be in the service, as the source holds it. Shared by the runs of one stage, so that it
 * holds across restarts.
 * @module
 */
import type { SyncCursor } from '../connector/index.js';
import { compareKeys, keyOfCursor, savedCursorOf } from '../worker/internal.js';
import { ConformanceFailure } from './report.js';
import type { Stage } from './stage.js';
import type { WireListener, WireRequest } from './wire.js';

const STATE_PATH = '/v2/connector/state';

export class CursorWatch {
  readonly #stage: Stage;
  /** Every violation seen, in words. */
  readonly violations: string[] = [];
  /** How many state writes carried a cursor. */
  writes = 0;

  constructor(stage: Stage) {
    this.#stage = stage;
  }

  /** A listener for the stage's wires; `also` is called for each request too. */
  listener(also?: WireListener): WireListener {
    return {
      request: async (request, wire) => {
        if (request.method === 'PUT' && request.path === STATE_PATH) await this.#inspect(request);
        return also?.request?.(request, wire);
      },
      response: (request, status, body, wire) => also?.response?.(request, status, body, wire),
    };
  }

  /**
   * Throws a {@link ConformanceFailure} naming the first violations seen, if any; with `written`, also when no state
   * write carried a cursor at all.
   */
  expectKept(what = 'the runs', { written = false } = {}): void {
    if (written && this.writes === 0) {
      throw new ConformanceFailure(`${what} to save a cursor`, 'no state write carried one');
    }
    if (this.violations.length > 0) {
      throw new ConformanceFailure(
        'every saved cursor to be at or after the last, and everything at or before it acknowledged',
        this.violations.slice(0, 3).join('; '),
      );
    }
  }

  async #inspect(request: WireRequest): Promise<void> {
    const cursor = savedCursorOf((request.body as { state?: unknown } | undefined)?.state);
    if (cursor === undefined) return;
    this.writes += 1;
    const key = keyOfCursor(cursor);
    const saved = this.#stage.savedCursor();
    if (saved !== undefined && compareKeys(key, keyOfCursor(saved)) < 0) {
      this.violations.push(`the cursor moved back from ${show(saved)} to ${show(cursor)}`);
    }
    const source = await this.#stage.driver.holds();
    const times = source.flatMap((record) =>
      record.lastModified === undefined ? [] : [new Date(record.lastModified).getTime()],
    );
    const latest = Math.max(this.#stage.deletedLatest, ...times);
    if (Number.isFinite(latest) && key.at > latest) {
      this.violations.push(
        `the cursor ${show(cursor)} is later than every change in the source (the latest at ${new Date(latest).toISOString()}): is lastModified taken from the clock of the machine rather than the source?`,
      );
      return;
    }
    const held = new Map(this.#stage.harness.approvals().map((approval) => [approval.id, approval]));
    const unacknowledged: string[] = [];
    for (const record of source) {
      if (record.lastModified === undefined) continue;
      const lastModified = new Date(record.lastModified).toISOString();
      const position = keyOfCursor({ lastModified, id: record.id });
      if (compareKeys(position, key) > 0) continue;
      const approval = held.get(record.id);
      if (approval === undefined || Date.parse(approval.lastModified) < position.at) {
        unacknowledged.push(
          `${JSON.stringify(record.id)} (at ${lastModified}: the service holds ${approval === undefined ? 'nothing' : `its version at ${approval.lastModified}`})`,
        );
      }
    }
    if (unacknowledged.length > 0) {
      this.violations.push(
        `a state write saved the cursor ${show(cursor)} before the service had ${unacknowledged.slice(0, 3).join(', ')}${unacknowledged.length > 3 ? ` and ${unacknowledged.length - 3} more` : ''}`,
      );
    }
  }
}

function show(cursor: SyncCursor): string {
  return `(${cursor.lastModified}, ${JSON.stringify(cursor.id)})`;
}
