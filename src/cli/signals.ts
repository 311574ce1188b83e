/**
 * Resolves on the first SIGINT or SIGTERM. The one place the process's signals are handled; a second signal
 * while shutting down falls through to Node's default and ends the process at once.
 */
export function onShutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handle = (signal: NodeJS.Signals) => {
      process.off('SIGINT', handle);
      process.off('SIGTERM', handle);
      resolve(signal);
    };
    process.once('SIGINT', handle);
    process.once('SIGTERM', handle);
  });
}
