import type { SystemView } from '../api.js';
import type { LiveChange } from '../view.js';

/** A panel of the system page, fed the system's overview (connector, templates, state) as it changes. */
export interface Panel {
  readonly element: HTMLElement;
  update(overview: SystemView, changes?: readonly LiveChange[]): Promise<void>;
  dispose?(): void;
}
