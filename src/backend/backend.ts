import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { PortInUseError } from '../errors.js';
import { ConnectorActivity } from './activity/index.js';
import { AdminOperations } from './admin/operations.js';
import { type ConsoleHandle, type DemoSignIn, registerConsole } from './console/index.js';
import { FaultInjector } from './faults/injector.js';
import { buildServer } from './http/server.js';
import { compileOptions, type ReferenceBackendOptions } from './options.js';
import { applySeed, parseSeed, readSeedFile, type SeededSignIns, seededSignIns } from './seed/load.js';
import { Store, type StoreChangeListener } from './store/index.js';

/**
 * A running reference backend: its address, its admin operations, its faults, and `close()`.
 * Returned by {@link startReferenceBackend}.
 */
export class ReferenceBackend extends AdminOperations {
  /** Base URL of both APIs, for example `http://127.0.0.1:53124`. */
  readonly url: string;
  /** The token that opens the admin API (`/admin/...`). */
  readonly adminToken: string;
  /** Faults to inject into the next matching requests; none unless added. */
  readonly faults: FaultInjector;
  readonly #app: FastifyInstance;
  readonly #store: Store;
  readonly #console: ConsoleHandle;
  #closing: Promise<void> | undefined;

  /** @internal Use {@link startReferenceBackend}. */
  constructor(parts: {
    url: string;
    adminToken: string;
    faults: FaultInjector;
    app: FastifyInstance;
    store: Store;
    console: ConsoleHandle;
  }) {
    super(parts.store, (signIns) => showSignIns(parts.console, signIns));
    this.url = parts.url;
    this.adminToken = parts.adminToken;
    this.faults = parts.faults;
    this.#app = parts.app;
    this.#store = parts.store;
    this.#console = parts.console;
  }

  /**
   * A new link that signs a browser in to the console (`/console`), once: the page exchanges its one-time token
   * for a session cookie and removes it from the address bar. Unused, it stops working after an hour.
   */
  createConsoleLink(): string {
    // A browser cannot open the address "any interface" the server may listen on; the loopback one reaches it.
    return this.#console.loginLink(
      this.url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:'),
    );
  }

  /**
   * Calls `listener` after each write the backend commits (an approval received, a task created, leased or
   * completed, a connector registered, …), as the console's live updates hear of it, until the returned function is
   * called. A write that is rolled back is never told, and a listener that throws changes nothing.
   */
  watch(listener: StoreChangeListener): () => void {
    return this.#store.changes.subscribe(listener);
  }

  /**
   * Lets the console offer to fill in these demo sign-ins when one of the system's approvers acts, so that trying a
   * simulated source needs no terminal; an empty list forgets them. Only for demo accounts: the console shows them to
   * whoever is signed in.
   */
  setConsoleDemoSignIns(systemId: string, signIns: readonly DemoSignIn[]): void {
    this.#store.systems.get(systemId);
    this.#console.setDemoSignIns(systemId, signIns);
  }

  /** Stops listening, ends open connections and closes the store. Safe to call more than once. */
  close(): Promise<void> {
    this.#closing ??= Promise.resolve()
      .then(() => this.#console.close())
      .then(() => this.#app.close())
      .finally(() => this.#store.close());
    return this.#closing;
  }
}

/**
 * Starts the reference backend: the whole Approval Service (v1 and v2), its admin API, its console page and its
 * OpenAPI document, on `127.0.0.1` and a free port unless told otherwise. A port in use rejects with a
 * `PortInUseError`; bad options or a bad seed with a `ValidationError`.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { startReferenceBackend } from 'approval-connector-kit/backend';
 *
 * const backend = await startReferenceBackend();
 * const { connectorToken, system } = backend.createTenant();
 * // ... drive `${backend.url}/v2/...` with `Authorization: Bearer ${connectorToken}`
 * await backend.close();
 * ```
 */
export async function startReferenceBackend(
  options: ReferenceBackendOptions = {},
): Promise<ReferenceBackend> {
  const compiled = compileOptions(options);
  // Validated before anything opens, so a bad seed fails fast with every problem named.
  const seed =
    compiled.seed === undefined
      ? undefined
      : typeof compiled.seed === 'string'
        ? readSeedFile(compiled.seed)
        : parseSeed(compiled.seed);
  const store = new Store({
    file: compiled.dataFile,
    now: compiled.now,
    reservedTokens: [compiled.adminToken],
  });
  try {
    const seededIds = seed !== undefined && store.db.isEmpty() ? applySeed(store, seed) : undefined;
    const faults = new FaultInjector();
    const operations = new AdminOperations(store, (signIns) => showSignIns(consolePage, signIns));
    const activity = new ConnectorActivity(store, compiled.now);
    const app = buildServer({
      activity,
      store,
      faults,
      leaseMs: compiled.leaseMs,
      pending: new WeakMap(),
      logger: compiled.logger,
      adminToken: compiled.adminToken,
      operations,
    });
    const consolePage = registerConsole(app, {
      store,
      operations,
      faults,
      activity,
      adminToken: compiled.adminToken,
      now: compiled.now,
    });
    // Not stored: read from the seed at every start, so that a data file seeded before offers them too.
    if (seed !== undefined) showSignIns(consolePage, seededSignIns(store, seed, seededIds));
    await app.listen({ port: compiled.port, host: compiled.host }).catch((error: unknown) => {
      throw PortInUseError.from(error, {
        port: compiled.port,
        host: compiled.host,
        setting: 'the `port` option',
      });
    });
    const address = app.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}`;
    return new ReferenceBackend({
      url,
      adminToken: compiled.adminToken,
      faults,
      app,
      store,
      console: consolePage,
    });
  } catch (error) {
    store.close();
    throw error;
  }
}

/** Lets the console offer a seed's demo sign-ins, each system's. */
function showSignIns(console: ConsoleHandle, signIns: SeededSignIns): void {
  for (const [systemId, systemSignIns] of signIns) console.setDemoSignIns(systemId, systemSignIns);
}
