/** Where shutdown signals come from: the process, or a stand-in in tests. */
export interface SignalSource {
  once(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

/**
 * Resolves on the first SIGINT or SIGTERM. The one place the kit handles a process's shutdown signals; a second
 * signal while shutting down falls through to Node's default and ends the process at once.
 */
export function onShutdownSignal(source: SignalSource = process): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handle = (signal: NodeJS.Signals) => {
      source.off('SIGINT', handle);
      source.off('SIGTERM', handle);
      resolve(signal);
    };
    source.once('SIGINT', handle);
    source.once('SIGTERM', handle);
  });
}
