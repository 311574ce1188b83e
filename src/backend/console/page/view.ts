import type { LiveEvent } from './api.js';
import { h } from './dom.js';

export type LiveChange = LiveEvent['changes'][number];

/** A page of the console: its element, and how it reloads when the backend says something changed. */
export interface View {
  readonly element: HTMLElement;
  /** Reloads what the view shows; `changes` says what changed (absent: load everything). */
  update(changes?: readonly LiveChange[]): Promise<void>;
  dispose?(): void;
}

/** Whether any change is of one of `kinds` and concerns `systemId` (or every system). */
export function touches(
  changes: readonly LiveChange[] | undefined,
  kinds: readonly LiveChange['kind'][],
  systemId?: string,
): boolean {
  if (changes === undefined) return true;
  return changes.some(
    (change) =>
      kinds.includes(change.kind) &&
      (systemId === undefined || change.systemId === undefined || change.systemId === systemId),
  );
}

const status = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });

/** The live region screen readers read out; every outcome the console reports goes there too. */
export function statusRegion(): HTMLElement {
  return status;
}

export function announce(text: string): void {
  status.textContent = text;
}

/** A message shown where a view's content would be, with the error's words. */
export function errorMessage(error: unknown): HTMLElement {
  return h(
    'p',
    { class: 'notice notice-bad', role: 'alert' },
    error instanceof Error ? error.message : String(error),
  );
}
