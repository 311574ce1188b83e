import type { Connector } from '../../connector/index.js';
import { onShutdownSignal, type SignalSource } from '../../internal/signals.js';
import { type ConnectorOptions, ConnectorWorker } from '../core/index.js';

export type { SignalSource };

/** Options of {@link runConnector}. */
export interface RunConnectorOptions {
  /**
   * Where the shutdown signals come from.
   * @default process
   */
  signals?: SignalSource;
  /**
   * Ends the process, with the exit code, once the worker's stop deadline (`stopDeadlineMs`) has passed since the
   * signal, in case anything still holds it then (a handler that ignores its `signal` and never settles). The timer
   * does not itself keep the process alive. `false` never ends it.
   * @default process.exit when `signals` is the process; `false` when it is a stand-in
   */
  exit?: ((code: number) => void) | false;
  /**
   * Told the first shutdown signal when it arrives, before the stop begins (to log it, say). An error it throws is
   * ignored: the stop goes on.
   * @default none
   */
  onSignal?: (signal: NodeJS.Signals) => void;
}

/**
 * Runs a connector as a long-lived worker: builds its {@link ConnectorWorker} with the options (a bad option
 * rejects, before any signal is handled), starts it, waits for the first SIGTERM or SIGINT, stops it gracefully,
 * and resolves with the exit code (0 after a stop, 1 when the worker failed to start). The process ends within the
 * worker's `stopDeadlineMs` of the signal (`shutdown.graceMs + shutdown.forceMs` and 1 s), whatever the handlers
 * and the service do: the tasks whose outcome is then unknown are logged by id, and the service offers them again.
 * A second signal during shutdown falls through to Node's default and ends the process at once.
 *
 * Given a worker instead (one a test harness started, say), it runs that one as it is.
 *
 * @example
 * <!-- example: typecheck, because it runs until the process is signalled -->
 * ```ts
 * import { runConnector } from 'approval-connector-kit/worker';
 *
 * process.exitCode = await runConnector(new MyConnector(sourceClient), { service: { baseUrl, token } });
 * ```
 */
export function runConnector(
  connector: Connector<object>,
  options: ConnectorOptions,
  run?: RunConnectorOptions,
): Promise<number>;
export function runConnector(
  worker: ConnectorWorker<Connector<object>>,
  run?: RunConnectorOptions,
): Promise<number>;
export async function runConnector(
  target: Connector<object> | ConnectorWorker<Connector<object>>,
  optionsOrRun?: ConnectorOptions | RunConnectorOptions,
  run?: RunConnectorOptions,
): Promise<number> {
  const [worker, options] =
    target instanceof ConnectorWorker
      ? [target, (optionsOrRun as RunConnectorOptions | undefined) ?? {}]
      : [new ConnectorWorker(target, optionsOrRun as ConnectorOptions), run ?? {}];
  const signalled = onShutdownSignal(options.signals).then((signal) => {
    try {
      options.onSignal?.(signal);
    } catch {
      // Observing the signal never changes the stop.
    }
    return signal;
  });
  const exit = options.exit ?? (options.signals === undefined ? (code: number) => process.exit(code) : false);
  let code: number | undefined;
  const stop = async (): Promise<void> => {
    if (exit !== false) {
      // Unref'd: a process that empties its event loop ends by itself, before the deadline.
      setTimeout(() => exit(code ?? 1), worker.stopDeadlineMs).unref();
    }
    await worker.stop();
  };
  try {
    // A worker already started (by a test harness, say) is run as it is.
    if (worker.lifecycle === 'idle') await Promise.race([worker.start(), signalled]);
    await signalled;
  } catch {
    // start() has logged why; stop what did start.
    await stop();
    code = 1;
    return code;
  }
  await stop();
  code = worker.lifecycle === 'stopped' ? 0 : 1;
  return code;
}
