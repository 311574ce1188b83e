import { onShutdownSignal, type SignalSource } from '../signals.js';
import type { Connector } from './connector.js';

export type { SignalSource };

/**
 * Runs a connector as a long-lived worker: starts it (unless it runs already), waits for the first SIGTERM or
 * SIGINT, stops it gracefully, and resolves with the exit code (0 after a clean stop, 1 when the connector failed).
 * A second signal during shutdown falls through to Node's default and ends the process at once.
 *
 * @example
 * ```ts
 * process.exitCode = await runConnector(new JiraConnector(options));
 * ```
 */
export async function runConnector(
  connector: Pick<Connector, 'start' | 'stop' | 'lifecycle'>,
  options: { signals?: SignalSource } = {},
): Promise<number> {
  const signalled = onShutdownSignal(options.signals);
  try {
    // A connector already started (by a test harness, say) is run as it is.
    if (connector.lifecycle === 'idle') await Promise.race([connector.start(), signalled]);
    await signalled;
  } catch {
    // start() has logged why; stop what did start.
    await connector.stop();
    return 1;
  }
  await connector.stop();
  return connector.lifecycle === 'stopped' ? 0 : 1;
}
