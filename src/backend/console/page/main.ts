/**
 * The console page: signs in with the one-time token of its link, then shows the backend's organizations, a
 * system's approvals, tasks, connector and state, an approval's own page, and the fault switches, updated live by
 * server-sent events, under a banner while any fault is in force.
 */
import './styles.css';
import { api, ConsoleError, type FaultInfo, type LiveEvent } from './api.js';
import { fill, h } from './dom.js';
import { currentRoute, errorMessage, type LiveChange, statusRegion, touches, type View } from './view.js';
import { approvalView } from './views/approval.js';
import { describeFault, faultsView, scopeOf } from './views/faults.js';
import { organizationsView } from './views/organizations.js';
import { signInView } from './views/sign-in.js';
import { systemView, TABS, type Tab } from './views/system.js';

const root = document.getElementById('app') as HTMLElement;
let view: View | undefined;
let events: EventSource | undefined;
const banner = h('div', {
  class: 'fault-banner',
  role: 'region',
  'aria-label': 'Faults in force',
  hidden: true,
});
const connection = h('p', { class: 'connection', role: 'alert', hidden: true });

/** The view the address names: `#/`, `#/faults`, `#/systems/<id>/<tab>`, `#/systems/<id>/approvals/<approvalId>`. */
function route(): View {
  const { path, query } = currentRoute();
  const [first, id, tab, approvalId] = path;
  if (first === 'faults') return faultsView();
  if (first === 'systems' && id !== undefined && id !== '') {
    if (tab === 'approvals' && approvalId !== undefined && approvalId !== '')
      return approvalView(id, approvalId);
    return systemView(id, TABS.includes(tab as Tab) ? (tab as Tab) : 'approvals', query);
  }
  return organizationsView();
}

function navLink(href: string, text: string, current: boolean): HTMLElement {
  return h('a', { href, 'aria-current': current ? 'page' : undefined }, text);
}

/** Shows the view the address names. Filters write the address with replaceState, which runs none of this. */
function show(): void {
  const navigated = view !== undefined;
  view?.dispose?.();
  view = route();
  const hash = location.hash;
  const main = h('main', { id: 'main' }, view.element);
  fill(
    root,
    h('a', { class: 'skip', href: '#main', onclick: skipToMain }, 'Skip to the content'),
    h(
      'header',
      { class: 'top' },
      h('p', { class: 'brand' }, 'Reference backend · console'),
      h(
        'nav',
        { 'aria-label': 'Console' },
        navLink('#/', 'Organizations', !hash.startsWith('#/faults') && !hash.startsWith('#/systems')),
        navLink('#/faults', 'Faults', hash.startsWith('#/faults')),
        h('button', { type: 'button', class: 'link', onclick: signOut }, 'Sign out'),
      ),
    ),
    connection,
    banner,
    main,
    statusRegion(),
  );
  const shown = view;
  void view.update().then(() => {
    // A new view takes the focus to its heading, which a screen reader reads out; not on the first load.
    if (navigated && view === shown) focusHeading(shown.element);
  });
}

function focusHeading(element: HTMLElement): void {
  const heading = element.querySelector<HTMLElement>('h1');
  if (heading === null) return;
  heading.setAttribute('tabindex', '-1');
  heading.focus();
}

function skipToMain(event: Event): void {
  // The address carries the route; the skip link moves the focus without changing it.
  event.preventDefault();
  const main = document.getElementById('main');
  main?.setAttribute('tabindex', '-1');
  main?.focus();
}

/** The banner on every page while any fault is in force, with each fault's scope and how often it applied. */
async function showFaults(): Promise<void> {
  let faults: FaultInfo[];
  let systems = new Map<string, string>();
  try {
    faults = await api.faults();
    if (faults.some((fault) => fault.systemId !== undefined)) {
      const organizations = await api.organizations();
      systems = new Map(
        organizations.flatMap((org) => org.systems.map((system) => [system.id, system.name])),
      );
    }
  } catch {
    return;
  }
  banner.hidden = faults.length === 0;
  fill(
    banner,
    faults.length === 0
      ? null
      : [
          h(
            'p',
            { class: 'fault-banner-title' },
            h('strong', {}, `${faults.length === 1 ? 'A fault is' : `${faults.length} faults are`} in force`),
            ': requests to the service fail on purpose. ',
            h('a', { href: '#/faults' }, 'Switch them off'),
          ),
          h(
            'ul',
            {},
            faults.map((fault) =>
              h(
                'li',
                { 'data-fault-id': fault.id },
                h('strong', {}, describeFault(fault.fault)),
                ' on ',
                h('span', { class: 'mono' }, `${fault.method ?? 'any method'} ${fault.path ?? 'any path'}`),
                ' ',
                scopeOf(fault, systems),
                ` · applied ${fault.hits} time${fault.hits === 1 ? '' : 's'}`,
              ),
            ),
          ),
        ],
  );
}

function signOut(): void {
  events?.close();
  void api.signOut().finally(() => signedOut(undefined));
}

function signedOut(reason: string | undefined): void {
  events?.close();
  view?.dispose?.();
  view = undefined;
  document.title = 'Sign in · Console · reference backend';
  fill(root, signInView(reason, start), statusRegion());
}

/** Retries after 1, 2, 4, … up to 30 seconds while the backend cannot be reached. */
let backoff = 1_000;
let retry: number | undefined;

function disconnected(): void {
  connection.hidden = false;
  connection.textContent = `The backend cannot be reached: nothing on this page is current. Trying again in ${Math.round(backoff / 1000)} s…`;
  window.clearTimeout(retry);
  retry = window.setTimeout(() => {
    backoff = Math.min(backoff * 2, 30_000);
    reconnect();
  }, backoff);
}

function reconnect(): void {
  api.resume().then(
    (open) => {
      if (!open) return signedOut('Your session has ended (the backend may have restarted): sign in again.');
      listen();
    },
    () => disconnected(),
  );
}

function listen(): void {
  events?.close();
  events = new EventSource('/console/api/events');
  events.addEventListener('open', () => {
    const wasDown = !connection.hidden;
    connection.hidden = true;
    backoff = 1_000;
    // Whatever happened while the stream was down is reloaded.
    if (wasDown) {
      void view?.update();
      void showFaults();
    }
  });
  events.addEventListener('message', (message: MessageEvent<string>) => {
    const { changes } = JSON.parse(message.data) as LiveEvent;
    if (touches(changes as LiveChange[], ['faults'])) void showFaults();
    void view?.update(changes as LiveChange[]);
  });
  events.addEventListener('error', () => {
    // The browser retries a broken stream by itself, but not one the backend refused or could not be reached for.
    events?.close();
    disconnected();
  });
}

function start(): void {
  window.addEventListener('hashchange', show);
  listen();
  show();
  void showFaults();
}

async function boot(): Promise<void> {
  const login = new URLSearchParams(location.hash.replace(/^#/, '')).get('login');
  if (login !== null) {
    // Out of the address bar (and so out of any copy of the address) before anything else.
    history.replaceState(null, '', `${location.pathname}${location.search}`);
    try {
      await api.signIn(login);
    } catch (error) {
      if (error instanceof ConsoleError && error.status === 401 && (await api.resume())) return start();
      return signedOut(
        error instanceof ConsoleError && error.status === 401
          ? error.message
          : String(error instanceof Error ? error.message : error),
      );
    }
    return start();
  }
  if (await api.resume()) return start();
  signedOut(undefined);
}

boot().catch((error: unknown) => fill(root, h('main', { id: 'main' }, errorMessage(error))));
