import { performance } from 'node:perf_hooks';
import type { Dispatcher, Pool } from 'undici';

/** One request of a load run. */
export interface LoadRequest {
  method: Dispatcher.HttpMethod;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * Sends `count` requests through `pool`, `inFlight` at a time, each made by `request(index)`, reading every answer
 * in full, and returns the time it took in milliseconds. Any answer but 200 ends the run with an error, so a
 * benchmark never reports the speed of failures.
 */
export async function drive(
  pool: Pool,
  count: number,
  inFlight: number,
  request: (index: number) => LoadRequest,
): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const { method, path, headers, body } = request(next++);
      const answer = await pool.request({ method, path, headers, body });
      const text = await answer.body.text();
      if (answer.statusCode !== 200) {
        throw new Error(`${method} ${path} answered ${answer.statusCode}: ${text.slice(0, 200)}`);
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return performance.now() - started;
}
