/**
 * Turning traces on in a worker process (`runWorker`: `connector run`, a project's `src/main.ts`): where the
 * application has installed the OpenTelemetry Node SDK (`@opentelemetry/sdk-node`), it is started from the standard
 * `OTEL_*` variables, and one line says so. See docs/tracing.md.
 * @module
 */
import { shownUrl } from '../../internal/shown-url.js';
import { tracerProviderRegistered } from '../../internal/tracing.js';
import { settlesWithin } from '../../internal/wait.js';
import type { PinoLogger } from '../operations/index.js';

/** The service name the SDK reports when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one. */
export const DEFAULT_SERVICE_NAME = 'approval-connector';

/** The longest the stop waits for the SDK to send the spans it still holds. */
export const TRACES_FLUSH_MS = 5_000;

/** What a started SDK leaves to do at the end: send what it holds. */
export interface TracingSdk {
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry Node SDK, configured by the `OTEL_*` variables (exporter, endpoint, sampler,
 * propagators, resource), and logs one line saying where traces go. Nothing is started, and `undefined` is given,
 * when `OTEL_SDK_DISABLED` is `true`, when the application registered a tracer provider of its own (a
 * `--import` of its instrumentation, say: it is used as it is), or when the SDK is not installed (then one `debug`
 * line says so).
 */
export async function startTracingSdk(
  env: NodeJS.ProcessEnv,
  logger: PinoLogger,
): Promise<TracingSdk | undefined> {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if (tracerProviderRegistered()) {
    logger.info('tracing with the OpenTelemetry tracer provider the application registered');
    return undefined;
  }
  let sdk: typeof import('@opentelemetry/sdk-node');
  try {
    sdk = await import('@opentelemetry/sdk-node');
  } catch {
    logger.debug('traces off: @opentelemetry/sdk-node is not installed');
    return undefined;
  }
  const named =
    env.OTEL_SERVICE_NAME !== undefined || /\bservice\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const started = new sdk.NodeSDK(named ? {} : { serviceName: DEFAULT_SERVICE_NAME });
  started.start();
  logger.info(
    {
      exporter: env.OTEL_TRACES_EXPORTER ?? 'otlp',
      endpoint: shownEndpoint(
        env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318',
      ),
      protocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
      serviceName: env.OTEL_SERVICE_NAME ?? (named ? undefined : DEFAULT_SERVICE_NAME),
    },
    'tracing with the OpenTelemetry SDK, configured by the OTEL_* variables',
  );
  return started;
}

/** The endpoint as a log line may show it: no user, password or query, which may hold a key. */
function shownEndpoint(endpoint: string): string {
  try {
    return shownUrl(endpoint);
  } catch {
    return '(not a URL)';
  }
}

/** Sends what the SDK still holds, waiting {@link TRACES_FLUSH_MS} at most; never rejects. */
export async function flushTracingSdk(sdk: TracingSdk | undefined): Promise<void> {
  if (sdk === undefined) return;
  await settlesWithin(
    sdk.shutdown().catch(() => {}),
    TRACES_FLUSH_MS,
  );
}
