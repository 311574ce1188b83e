/**
 * Waiting with a bound: what keeps the connector's tasks within their deadlines whatever the handlers do. Every
 * timer here is a global one, so tests drive them with fake timers.
 * @module
 */

/** Aborts a new signal `ms` from now with `reason()`; `cancel()` disarms it, so that it then never fires. */
export function abortAfter(ms: number, reason: () => unknown): { signal: AbortSignal; cancel: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason()), Math.max(0, ms));
  // A deadline never keeps the process alive by itself: whatever waits on it does.
  timer.unref();
  return { signal: controller.signal, cancel: () => clearTimeout(timer) };
}
