import type { ConnectorCall, SystemView } from '../api.js';
import { badge, type Child, fill, h, time } from '../dom.js';
import { pageTitle } from '../view.js';
import { table } from './organizations.js';
import type { Panel } from './panel.js';

/** The connector's tab: what the backend saw of its requests, and its registration with its keys. */
export function connectorPanel(): Panel {
  const element = h('div', {});
  const health = h('section', { class: 'panel', 'aria-labelledby': 'health-title' });
  const registration = h('section', { class: 'panel', 'aria-labelledby': 'registration-title' });
  element.append(health, registration);
  return {
    element,
    async update(overview) {
      pageTitle(`Connector · ${overview.system.name}`);
      fill(health, healthOf(overview));
      fill(registration, registrationOf(overview));
    },
  };
}

/** Whether the key that expires at `expiresAt` has expired by `now`. */
function isExpired(expiresAt: string | undefined, now: string): boolean {
  return expiresAt !== undefined && Date.parse(expiresAt) <= Date.parse(now);
}

function registrationOf({ connector, now }: SystemView): Child {
  if (connector.updatedAt === undefined) {
    return h(
      'p',
      { class: 'notice' },
      'The connector has not registered yet: start it with this system’s token.',
    );
  }
  return [
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
        isExpired(connector.publicKeyExpiredAt, now) ? [' ', badge('expired', 'bad')] : null,
      ),
    ),
    connector.keys.length > 1 ? keysStillAccepted(connector.keys) : null,
  ];
}

function keysStillAccepted(keys: SystemView['connector']['keys']): HTMLElement[] {
  return [
    h('h2', {}, 'Keys still accepted'),
    h('p', { class: 'muted' }, 'Tasks sealed to an earlier key are delivered until that key expires.'),
    table(
      ['Public key', 'Expires'],
      keys.map((key) => [h('span', { class: 'mono wrap' }, key.publicKey), time(key.expiresAt)]),
    ),
  ];
}

/**
 * What the backend saw of the connector's requests: its last poll, push and sync, and its failures by status; and
 * its push health as its worker saved it.
 */
function healthOf({ health, connector, now }: SystemView): Child {
  const failures = Object.entries(health.failuresByStatus);
  return [
    h('h2', { id: 'health-title' }, 'Health'),
    h(
      'p',
      { class: 'muted small' },
      'What the backend saw of this connector’s requests since it started: a sync run pushes approvals, then saves ',
      'the connector’s state. Push from the source is as the connector’s worker last saved it in that state.',
    ),
    h(
      'dl',
      { class: 'fields health' },
      h('dt', {}, 'Last poll for tasks'),
      h('dd', { 'data-health': 'poll' }, lastCall(health.lastPoll, 'poll')),
      h('dt', {}, 'Last push of approvals'),
      h('dd', { 'data-health': 'push' }, lastCall(health.lastPush, 'push')),
      h('dt', {}, 'Last sync run (state saved)'),
      h('dd', { 'data-health': 'sync' }, lastCall(health.lastSync, 'sync run')),
      health.push === undefined
        ? null
        : [
            h('dt', {}, 'Push from the source'),
            h('dd', { 'data-health': 'push-health' }, pushHealth(health.push)),
          ],
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
        isExpired(connector.publicKeyExpiredAt, now) ? [' ', badge('expired', 'bad')] : null,
      ),
    ),
    recentFailures(health.recentFailures),
  ];
}

const PUSH_TONES = { healthy: 'good', degraded: 'bad', stopped: 'neutral' } as const;

/** Push health as the worker saved it: "push degraded since …, 3 missed", with the last delivery. */
function pushHealth(push: NonNullable<SystemView['health']['push']>): Child {
  return [
    badge(`push ${push.state}`, PUSH_TONES[push.state]),
    ' since ',
    time(push.since),
    `, ${push.missed} missed`,
    push.state === 'degraded' ? ` (${push.missedSinceLastDelivery} since the last delivery)` : '',
    h(
      'span',
      { class: 'muted' },
      push.lastDeliveryAt === undefined
        ? ' · no delivery since the worker started'
        : [' · last delivery ', time(push.lastDeliveryAt)],
    ),
  ];
}

function lastCall(seen: ConnectorCall | undefined, what: string): Child {
  if (seen === undefined) return h('span', { class: 'muted' }, `no ${what} since the backend started`);
  return [
    time(seen.at),
    ' ',
    seen.status === 200
      ? badge('ok', 'good')
      : badge(seen.status === 'dropped' ? 'dropped' : `failed ${seen.status}`, 'bad'),
    seen.injected ? h('span', { class: 'muted' }, ' (an injected fault)') : null,
  ];
}

function recentFailures(failures: SystemView['health']['recentFailures']): HTMLElement | null {
  if (failures.length === 0) return null;
  return h(
    'details',
    {},
    h('summary', {}, `The last ${failures.length} failed requests`),
    h(
      'ul',
      { class: 'failures' },
      failures.map((failure) =>
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
  );
}
