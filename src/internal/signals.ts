/** Where shutdown signals come from: the process, or a stand-in in tests. */
export interface SignalSource {
  once(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

/** What a signal that comes after the first does: end the process at once (Node's default), or nothing. */
export type RepeatedSignal = 'end' | 'ignore';

/**
 * Resolves on the first SIGINT or SIGTERM. The one place the kit handles a process's shutdown signals. By default a
 * second signal while shutting down falls through to Node's default and ends the process at once; with `repeated:
 * 'ignore'` every later one is ignored, for a process whose stop is bounded by itself and must not be cut short by
 * the same Ctrl+C told twice (`npm run` forwards the terminal's SIGINT to a script that got it already).
 */
export function onShutdownSignal(
  source: SignalSource = process,
  { repeated = 'end' }: { repeated?: RepeatedSignal } = {},
): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handle = (signal: NodeJS.Signals) => {
      source.off('SIGINT', handle);
      source.off('SIGTERM', handle);
      if (repeated === 'ignore') {
        // Heard and let go, each time: a listener is what keeps Node's default from ending the process.
        const ignore = (again: NodeJS.Signals) => source.once(again, ignore);
        source.once('SIGINT', ignore);
        source.once('SIGTERM', ignore);
      }
      resolve(signal);
    };
    source.once('SIGINT', handle);
    source.once('SIGTERM', handle);
  });
}
