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

const BRAND = 'Console · reference backend';

/** Names the page in the browser's tab and history: the view first, then the console. */
export function pageTitle(text: string): void {
  document.title = `${text} · ${BRAND}`;
}

/** The view's route and its query: `#/systems/S/approvals?show=waiting` gives the path and `show=waiting`. */
export function currentRoute(): { path: string[]; query: URLSearchParams } {
  const [path = '', query = ''] = location.hash.replace(/^#/, '').split('?', 2);
  return { path: path.split('/').slice(1).map(decodeURIComponent), query: new URLSearchParams(query) };
}

/**
 * Writes a view's filters into the address, so that a reload or a copied link shows the same; empty values are
 * left out. The entry is replaced, not added: Back leaves the view instead of stepping through keystrokes.
 */
export function setQuery(values: Record<string, string>): void {
  const { query } = currentRoute();
  for (const [key, value] of Object.entries(values)) {
    if (value === '') query.delete(key);
    else query.set(key, value);
  }
  const path = location.hash.replace(/^#/, '').split('?', 1)[0] ?? '';
  const text = query.toString();
  history.replaceState(history.state, '', `#${path}${text === '' ? '' : `?${text}`}`);
}
