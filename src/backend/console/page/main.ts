/**
 * The console page: signs in with the one-time token of its link, then shows the backend's organizations, a
 * system's approvals, tasks, connector and state, and the fault switches, updated live by server-sent events.
 */
import './styles.css';
import { api, ConsoleError, type LiveEvent } from './api.js';
import { fill, h } from './dom.js';
import { errorMessage, type LiveChange, statusRegion, type View } from './view.js';
import { faultsView } from './views/faults.js';
import { organizationsView } from './views/organizations.js';
import { signInView } from './views/sign-in.js';
import { systemView, TABS, type Tab } from './views/system.js';

const root = document.getElementById('app') as HTMLElement;
let view: View | undefined;
let events: EventSource | undefined;

/** The view the address names: `#/`, `#/faults`, `#/systems/<id>/<tab>`. */
function route(): View {
  const [, first, id, tab] = location.hash.replace(/^#/, '').split('/');
  if (first === 'faults') return faultsView();
  if (first === 'systems' && id !== undefined && id !== '') {
    return systemView(decodeURIComponent(id), TABS.includes(tab as Tab) ? (tab as Tab) : 'approvals');
  }
  return organizationsView();
}

function navLink(href: string, text: string, current: boolean): HTMLElement {
  return h('a', { href, 'aria-current': current ? 'page' : undefined }, text);
}

function show(): void {
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
    main,
    statusRegion(),
  );
  void view.update();
}

function skipToMain(event: Event): void {
  // The address carries the route; the skip link moves the focus without changing it.
  event.preventDefault();
  const main = document.getElementById('main');
  main?.setAttribute('tabindex', '-1');
  main?.focus();
}

function signOut(): void {
  events?.close();
  void api.signOut().finally(() => signedOut(undefined));
}

function signedOut(reason: string | undefined): void {
  events?.close();
  view?.dispose?.();
  view = undefined;
  fill(root, signInView(reason, start), statusRegion());
}

function listen(): void {
  events = new EventSource('/console/api/events');
  events.addEventListener('message', (message: MessageEvent<string>) => {
    const { changes } = JSON.parse(message.data) as LiveEvent;
    void view?.update(changes as LiveChange[]);
  });
  events.addEventListener('error', () => {
    // A stream the backend refused (the session ended) is not retried by the browser: find out why.
    if (events?.readyState === EventSource.CLOSED) {
      void api.resume().then((open) => (open ? listen() : signedOut('Your session has ended.')));
    }
  });
}

function start(): void {
  window.addEventListener('hashchange', show);
  listen();
  show();
}

async function boot(): Promise<void> {
  const login = new URLSearchParams(location.hash.replace(/^#/, '')).get('login');
  if (login !== null) {
    // Out of the address bar (and so out of the history and of any copy of the address) before anything else.
    history.replaceState(null, '', `${location.pathname}${location.search}`);
    try {
      await api.signIn(login);
    } catch (error) {
      if (error instanceof ConsoleError && error.status === 401 && (await api.resume())) return start();
      return signedOut(
        error instanceof ConsoleError && error.status === 401
          ? 'This login link has been used already, or has expired.'
          : String(error instanceof Error ? error.message : error),
      );
    }
    return start();
  }
  if (await api.resume()) return start();
  signedOut(undefined);
}

boot().catch((error: unknown) => fill(root, h('main', { id: 'main' }, errorMessage(error))));
