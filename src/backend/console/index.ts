/**
 * The console: a web page of the reference backend where a developer watches a connector and acts as an approver.
 * The backend registers it through {@link registerConsole}; the page itself is in `page/`, built into
 * `dist/console/` by the package's build.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { ConnectorActivity } from '../activity/index.js';
import type { AdminOperations } from '../admin/operations.js';
import type { FaultInjector } from '../faults/injector.js';
import type { Store } from '../store/index.js';
import { PageAssets } from './assets.js';
import { ConsoleLive } from './live.js';
import { CONSOLE_PREFIX, type DemoSignIn, registerConsoleRoutes } from './routes.js';
import { ConsoleSessions } from './sessions.js';

export { CONSOLE_PREFIX, type DemoSignIn } from './routes.js';
export { CSRF_HEADER, LOGIN_LINK_TTL_MS } from './sessions.js';

export interface ConsoleOptions {
  store: Store;
  operations: AdminOperations;
  faults: FaultInjector;
  activity: ConnectorActivity;
  adminToken: string;
  now: () => number;
}

/** What the backend keeps of its console: login links to hand out, and live streams to end when it closes. */
export interface ConsoleHandle {
  /** A new one-time login link to the console of the backend at `baseUrl`. */
  loginLink(baseUrl: string): string;
  /** Sets the demo sign-ins the console offers to fill in for the system's approvers (none: forgets them). */
  setDemoSignIns(systemId: string, signIns: readonly DemoSignIn[]): void;
  /** Ends the live event streams, so that the server can close. */
  close(): void;
}

export function registerConsole(app: FastifyInstance, options: ConsoleOptions): ConsoleHandle {
  const sessions = new ConsoleSessions(options.adminToken);
  const live = new ConsoleLive(options.store.changes, options);
  const demoSignIns = new Map<string, readonly DemoSignIn[]>();
  registerConsoleRoutes(app, { ...options, sessions, live, demoSignIns, assets: new PageAssets() });
  return {
    loginLink: (baseUrl) => `${baseUrl}${CONSOLE_PREFIX}/#login=${sessions.issueLoginToken()}`,
    setDemoSignIns(systemId, signIns) {
      if (signIns.length === 0) demoSignIns.delete(systemId);
      else
        demoSignIns.set(
          systemId,
          signIns.map((signIn) => ({ ...signIn })),
        );
    },
    close: () => live.close(),
  };
}
