/**
 * Waiting, abortable and bounded: what keeps retries, polling, the connector's shutdown and its tasks within their
 * deadlines whatever the service and the handlers do. Every timer here is a global one, so tests drive them with
 * fake timers.
 * @module
 */

/** Waits `ms`, or rejects with `signal.reason` as soon as the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Settles as `promise` does, or rejects with the signal's reason as soon as it is aborted, whichever comes first. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Resolves `true` once `promise` settles (either way), or `false` when `ms` pass first. Never rejects. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Aborts `controller` (a new one by default) `ms` from now with `reason()`; `cancel()` disarms it, so that it then
 * never fires.
 */
export function abortAfter(
  ms: number,
  reason: () => unknown,
  controller = new AbortController(),
): { signal: AbortSignal; cancel: () => void } {
  const timer = setTimeout(() => controller.abort(reason()), Math.max(0, ms));
  // A deadline never keeps the process alive by itself: whatever waits on it does.
  timer.unref();
  return { signal: controller.signal, cancel: () => clearTimeout(timer) };
}
