/**
 * The worker's dealings with the service around its start: reaching it while it is down, publishing the connector's
 * UI templates, and counting the client's retries; and its operations endpoints, which answer from its state.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { UiTemplateWrite } from '../../api/index.js';
import { type IntegrationClient, isRetryable, NetworkError, type RetryEvent } from '../../client/index.js';
import { backoffDelay } from '../../internal/backoff.js';
import { shownUrl } from '../../internal/shown-url.js';
import { sleep } from '../../internal/wait.js';
import {
  type ConnectorMetrics,
  componentLogger,
  OperationsServer,
  type OperationsServerOptions,
  type PinoLogger,
} from '../operations/index.js';
import type { ConnectorOptions } from './connector-options.js';
import type { LifecycleState } from './lifecycle.js';

// While the service cannot be reached at start: from a second, doubling, up to a minute.
const START_BACKOFF = { baseMs: 1_000, maxMs: 60_000, jitter: 'equal' } as const;

/**
 * Runs a start-up step until it succeeds. While the service is down or unreachable (what the client itself would
 * retry: network errors, timeouts, 5xx, 429) the step is logged and tried again with backoff, until `signal`
 * aborts; any other failure (a rejected token, an invalid registration) ends the start.
 */
export async function untilReachable(
  what: string,
  step: () => Promise<void>,
  {
    signal,
    random,
    logger,
    baseUrl,
  }: { signal: AbortSignal; random: () => number; logger: PinoLogger; baseUrl: string | URL },
): Promise<void> {
  for (let attempt = 0; !signal.aborted; attempt += 1) {
    try {
      await step();
      return;
    } catch (error) {
      if (signal.aborted) return;
      if (!isRetryable(error, 'safe')) throw error;
      const delay = backoffDelay(attempt, { ...START_BACKOFF, random });
      // The failure as one line, with where the service was looked for: its stack would say nothing more.
      const { code } = error as { code?: unknown };
      const reason = error instanceof Error ? error.message : String(error);
      const url = shownUrl(baseUrl);
      // Nothing listening at all is most often a service not started, or a URL mistyped: say both.
      const hint =
        error instanceof NetworkError && error.unsent
          ? `nothing answers at ${url}: is the service running, and is its URL right (APPROVAL_SERVICE_URL, or the service.baseUrl option)?`
          : undefined;
      logger.warn(
        { url, code, error: reason, ...(hint === undefined ? {} : { hint }), attempt, retryInMs: delay },
        `cannot ${what} yet; retrying`,
      );
      await sleep(delay, signal).catch(() => {});
    }
  }
}

/** Publishes each declared template whose content differs from what the service holds. */
export async function publishTemplates(
  client: IntegrationClient,
  uiTemplates: readonly UiTemplateWrite[],
  signal: AbortSignal,
  logger: PinoLogger,
): Promise<void> {
  if (uiTemplates.length === 0) return;
  const held = await client.getUiTemplates({ signal });
  const changed = uiTemplates.filter(
    (template) =>
      !held.some(
        (existing) =>
          existing.type === template.type &&
          isDeepStrictEqual(existing.uiTemplate[template.schemaId], template.template),
      ),
  );
  if (changed.length === 0) return;
  await client.putUiTemplates(changed, { signal });
  logger.info(
    { templates: changed.map(({ type, schemaId }) => `${type}/${schemaId}`) },
    'published UI templates',
  );
}

// The client does not log: the worker counts and logs each of its retries, then tells the caller's own hook.
export function retryReporter(
  metrics: ConnectorMetrics,
  logger: PinoLogger,
  own: ConnectorOptions['service']['onRetry'],
): (event: RetryEvent) => void {
  return (event) => {
    const { endpoint, method, path, attempt, delayMs, reason, error } = event;
    metrics.clientRetry(endpoint, reason);
    logger.debug({ endpoint, method, path, attempt, delayMs, reason, err: error }, 'retrying a request');
    own?.(event);
  };
}

/**
 * The worker's operations endpoints: `/healthz` healthy unless the worker failed or stopped, `/readyz` ready or why
 * not (task polling stalled, or the lifecycle state), `/metrics` its metrics.
 */
export function operationsServer(
  options: Pick<OperationsServerOptions, 'port' | 'host'>,
  worker: {
    logger: PinoLogger;
    metrics: ConnectorMetrics;
    lifecycle: () => LifecycleState;
    ready: () => boolean;
    /** Whether the poller polls; `undefined` without one. */
    polling: () => boolean | undefined;
  },
): OperationsServer {
  const { lifecycle, ready, polling } = worker;
  return new OperationsServer({
    ...options,
    logger: componentLogger(worker.logger, 'operations'),
    metrics: worker.metrics,
    health: () => ({ healthy: lifecycle() !== 'failed' && lifecycle() !== 'stopped', state: lifecycle() }),
    isReady: () =>
      ready()
        ? { ready: true }
        : { ready: false, reason: polling() === false ? 'task polling stalled' : lifecycle() },
  });
}
