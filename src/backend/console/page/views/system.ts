import { api, type SystemView } from '../api.js';
import { fill, h, jsonTree, time } from '../dom.js';
import { errorMessage, type LiveChange, pageTitle, touches, type View } from '../view.js';
import { approvalsPanel } from './approvals.js';
import { connectorPanel } from './connector.js';
import type { Panel } from './panel.js';
import { tasksPanel } from './tasks.js';

export const TABS = ['approvals', 'tasks', 'connector', 'state'] as const;
export type Tab = (typeof TABS)[number];
const TAB_NAMES: Record<Tab, string> = {
  approvals: 'Approvals',
  tasks: 'Tasks',
  connector: 'Connector and health',
  state: 'State',
};

/** A connector rotates its key this long before it expires by default (`keys.rotationMarginMs`, 7 days). */
export const ROTATION_MARGIN_MS = 7 * 24 * 60 * 60 * 1000;

/** One system: its name, a warning about its connector's key, and one of its tabs. */
export function systemView(systemId: string, tab: Tab, query: URLSearchParams): View {
  const heading = h('h1', { id: 'system-title' }, 'System');
  const warning = h('div', {});
  const nav = h(
    'nav',
    { class: 'tabs', 'aria-label': 'System' },
    TABS.map((name) =>
      h(
        'a',
        {
          href: `#/systems/${encodeURIComponent(systemId)}/${name}`,
          'aria-current': name === tab ? 'page' : undefined,
        },
        TAB_NAMES[name],
      ),
    ),
  );
  const panel = panelFor(tab, systemId, query);
  // The connector's tab shows its health, which every request of the connector changes.
  const overviewKinds: LiveChange['kind'][] = ['connector', 'templates', 'state', 'directory'];
  if (tab === 'connector') overviewKinds.push('health');
  const element = h('section', { 'aria-labelledby': 'system-title' }, heading, warning, nav, panel.element);
  let overview: SystemView | undefined;

  return {
    element,
    async update(changes) {
      try {
        if (overview === undefined || touches(changes, overviewKinds, systemId)) {
          overview = await api.system(systemId);
          fill(
            heading,
            overview.system.name,
            ' ',
            h('span', { class: 'muted' }, `· ${overview.organization.name}`),
          );
          fill(warning, keyWarning(overview));
          await panel.update(overview);
        } else {
          await panel.update(overview, changes);
        }
      } catch (error) {
        fill(warning, errorMessage(error));
      }
    },
    dispose: () => panel.dispose?.(),
  };
}

function panelFor(tab: Tab, systemId: string, query: URLSearchParams): Panel {
  switch (tab) {
    case 'approvals':
      return approvalsPanel(systemId, query);
    case 'tasks':
      return tasksPanel(systemId, query);
    case 'connector':
      return connectorPanel();
    case 'state':
      return statePanel();
  }
}

/** A warning when the key tasks are sealed to has expired, or is past the time a connector rotates it. */
export function keyWarning({ connector, now }: SystemView): HTMLElement | null {
  if (!connector.authRequired || connector.publicKeyExpiredAt === undefined) return null;
  const left = Date.parse(connector.publicKeyExpiredAt) - Date.parse(now);
  if (left <= 0) {
    return h(
      'p',
      { class: 'notice notice-bad', role: 'alert' },
      "The connector's public key has expired: no task can be created for it until it registers a new key.",
    );
  }
  if (left > ROTATION_MARGIN_MS) return null;
  return h(
    'p',
    { class: 'notice notice-warn', role: 'alert' },
    `The connector's public key expires in ${duration(left)}, and a connector with the default settings would have `,
    'rotated it by now: check that it is running and can register its new key.',
  );
}

function duration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 120) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} hours`;
  return `${Math.round(hours / 24)} days`;
}

function statePanel(): Panel {
  const element = h('div', { class: 'panel' });
  let shown = '';
  return {
    element,
    async update({ state, system }) {
      pageTitle(`State · ${system.name}`);
      const json = JSON.stringify(state);
      // Rebuilt only when it changed, so the branches a reader opened stay open.
      if (json === shown) return;
      shown = json;
      fill(
        element,
        h(
          'p',
          { class: 'muted' },
          'Updated ',
          time(state.updatedAt),
          ' · record ',
          h('span', { class: 'mono' }, state.id),
        ),
        jsonTree(state.state, 3, 'state'),
      );
    },
  };
}
