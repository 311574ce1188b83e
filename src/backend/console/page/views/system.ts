import { api, type ConnectorCall, type SystemView } from '../api.js';
import { badge, fill, h, jsonTree, time } from '../dom.js';
import { errorMessage, type LiveChange, pageTitle, touches, type View } from '../view.js';
import { approvalsPanel } from './approvals.js';
import { table } from './organizations.js';
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

/** A panel of the system page, fed the system's overview (connector, templates, state) as it changes. */
export interface Panel {
  readonly element: HTMLElement;
  update(overview: SystemView, changes?: readonly LiveChange[]): Promise<void>;
  dispose?(): void;
}

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

function connectorPanel(): Panel {
  const element = h('div', {});
  const health = h('section', { class: 'panel', 'aria-labelledby': 'health-title' });
  const registration = h('section', { class: 'panel', 'aria-labelledby': 'registration-title' });
  element.append(health, registration);
  return {
    element,
    async update(overview) {
      const { connector, now } = overview;
      pageTitle(`Connector · ${overview.system.name}`);
      fill(health, healthOf(overview));
      if (connector.updatedAt === undefined) {
        fill(
          registration,
          h(
            'p',
            { class: 'notice' },
            'The connector has not registered yet: start it with this system’s token.',
          ),
        );
        return;
      }
      fill(
        registration,
        h('h2', { id: 'registration-title' }, 'Registration'),
        h(
          'dl',
          { class: 'fields' },
          h('dt', {}, 'Registered'),
          h('dd', {}, time(connector.updatedAt)),
          h('dt', {}, 'Task types'),
          h(
            'dd',
            {},
            connector.taskTypes.length === 0
              ? 'none'
              : h(
                  'ul',
                  { class: 'inline-list' },
                  connector.taskTypes.map((type) => h('li', {}, badge(type))),
                ),
          ),
          h('dt', {}, 'authRequired'),
          h('dd', {}, connector.authRequired ? 'yes: tasks carry the approver’s sealed credentials' : 'no'),
          h('dt', {}, 'Public key'),
          h('dd', { class: 'mono wrap' }, connector.publicKey ?? 'none'),
          h('dt', {}, 'Key expires'),
          h(
            'dd',
            {},
            time(connector.publicKeyExpiredAt),
            connector.publicKeyExpiredAt !== undefined &&
              Date.parse(connector.publicKeyExpiredAt) <= Date.parse(now)
              ? [' ', badge('expired', 'bad')]
              : null,
          ),
        ),
        connector.keys.length > 1
          ? [
              h('h2', {}, 'Keys still accepted'),
              h(
                'p',
                { class: 'muted' },
                'Tasks sealed to an earlier key are delivered until that key expires.',
              ),
              table(
                ['Public key', 'Expires'],
                connector.keys.map((key) => [
                  h('span', { class: 'mono wrap' }, key.publicKey),
                  time(key.expiresAt),
                ]),
              ),
            ]
          : null,
      );
    },
  };
}

/** What the backend saw of the connector's requests: its last poll, push and sync, and its failures by status. */
function healthOf({ health, connector, now }: SystemView): (HTMLElement | null)[] {
  const call = (seen: ConnectorCall | undefined, what: string) =>
    seen === undefined
      ? h('span', { class: 'muted' }, `no ${what} since the backend started`)
      : [
          time(seen.at),
          ' ',
          seen.status === 200
            ? badge('ok', 'good')
            : badge(seen.status === 'dropped' ? 'dropped' : `failed ${seen.status}`, 'bad'),
          seen.injected ? h('span', { class: 'muted' }, ' (an injected fault)') : null,
        ];
  const failures = Object.entries(health.failuresByStatus);
  const keyLeft =
    connector.publicKeyExpiredAt === undefined
      ? undefined
      : Date.parse(connector.publicKeyExpiredAt) - Date.parse(now);
  return [
    h('h2', { id: 'health-title' }, 'Health'),
    h(
      'p',
      { class: 'muted small' },
      'What the backend saw of this connector’s requests since it started: a sync run pushes approvals, then saves ',
      'the connector’s state.',
    ),
    h(
      'dl',
      { class: 'fields health' },
      h('dt', {}, 'Last poll for tasks'),
      h('dd', { 'data-health': 'poll' }, call(health.lastPoll, 'poll')),
      h('dt', {}, 'Last push of approvals'),
      h('dd', { 'data-health': 'push' }, call(health.lastPush, 'push')),
      h('dt', {}, 'Last sync run (state saved)'),
      h('dd', { 'data-health': 'sync' }, call(health.lastSync, 'sync run')),
      h('dt', {}, 'Failed requests'),
      h(
        'dd',
        { 'data-health': 'failures' },
        failures.length === 0
          ? 'none'
          : h(
              'ul',
              { class: 'inline-list' },
              failures.map(([status, count]) =>
                h('li', {}, badge(`${status === 'dropped' ? 'dropped' : status}: ${count}`, 'bad')),
              ),
            ),
      ),
      h('dt', {}, 'Key expires'),
      h(
        'dd',
        {},
        connector.authRequired
          ? time(connector.publicKeyExpiredAt)
          : 'no key: the connector takes no credentials',
        keyLeft !== undefined && keyLeft <= 0 ? [' ', badge('expired', 'bad')] : null,
      ),
    ),
    health.recentFailures.length === 0
      ? null
      : h(
          'details',
          {},
          h('summary', {}, `The last ${health.recentFailures.length} failed requests`),
          h(
            'ul',
            { class: 'failures' },
            health.recentFailures.map((failure) =>
              h(
                'li',
                {},
                time(failure.at),
                ' ',
                h('span', { class: 'mono' }, `${failure.method} ${failure.path}`),
                ' ',
                badge(String(failure.status), 'bad'),
                failure.injected ? ' injected' : '',
              ),
            ),
          ),
        ),
  ];
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
