import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { ReferenceBackendOptions } from '../src/backend/index.js';
import type { backendOptionsSchema, CompiledOptions } from '../src/backend/options.js';
import type { ClientOptions, CompiledClientOptions, clientOptionsSchema } from '../src/client/options.js';
import type { SyncUserMappingsOptions, userMappingsOptionsSchema } from '../src/client/user-mappings.js';
import type {
  ConnectorOptions,
  connectorOptionsSchema,
  PollerOptions,
  ResolvedConnectorOptions,
  ShutdownOptions,
  SyncOptions,
} from '../src/worker/core/connector-options.js';
import type { KeyRingOptions, keyRingOptionsShape } from '../src/worker/keys/key-ring.js';
import type {
  LoggerOptions,
  loggerOptionsSchema,
  ResolvedLoggerOptions,
} from '../src/worker/operations/logger.js';
import type {
  ConnectorMetricsOptions,
  metricsOptionsShape,
  ResolvedMetricsOptions,
} from '../src/worker/operations/metrics.js';
import type {
  OperationsServerOptions,
  operationsServerOptionsSchema,
  ResolvedOperationsServerOptions,
} from '../src/worker/operations/server.js';

type Input<S extends z.ZodType> = z.input<S>;
type Output<S extends z.ZodType> = z.output<S>;
type Connector = Input<typeof connectorOptionsSchema>;

// Each option is documented once, on its settings interface; the resolved type is derived from it, and the schema is
// written against both (`satisfies OptionsShape<…>`), so that an option in one and not the other does not compile.
// These tests hold the derivation to what the schemas actually take and give, exactly.
describe('the options schemas take exactly the documented options', () => {
  it('of the connector, at every level', () => {
    expectTypeOf<keyof Connector>().toEqualTypeOf<keyof ConnectorOptions>();
    expectTypeOf<keyof NonNullable<Connector['sync']>>().toEqualTypeOf<keyof SyncOptions>();
    expectTypeOf<keyof NonNullable<NonNullable<Connector['sync']>['sourceRetry']>>().toEqualTypeOf<
      keyof NonNullable<SyncOptions['sourceRetry']>
    >();
    expectTypeOf<keyof NonNullable<Connector['poller']>>().toEqualTypeOf<keyof PollerOptions>();
    expectTypeOf<keyof NonNullable<Connector['shutdown']>>().toEqualTypeOf<keyof ShutdownOptions>();
    expectTypeOf<keyof NonNullable<Connector['keys']>>().toEqualTypeOf<
      keyof NonNullable<ConnectorOptions['keys']>
    >();
    expectTypeOf<keyof NonNullable<Connector['metrics']>>().toEqualTypeOf<
      keyof NonNullable<ConnectorOptions['metrics']>
    >();
    expectTypeOf<keyof Exclude<Connector['operations'], false | undefined>>().toEqualTypeOf<
      keyof Exclude<ConnectorOptions['operations'], false | undefined>
    >();
    expectTypeOf<ConnectorOptions>().toExtend<Connector>();
  });

  it('of the client', () => {
    type Client = Input<typeof clientOptionsSchema>;
    expectTypeOf<keyof Client>().toEqualTypeOf<keyof ClientOptions>();
    expectTypeOf<keyof NonNullable<Client['retry']>>().toEqualTypeOf<
      keyof NonNullable<ClientOptions['retry']>
    >();
    expectTypeOf<keyof NonNullable<Client['auth']>>().toEqualTypeOf<
      keyof NonNullable<ClientOptions['auth']>
    >();
    expectTypeOf<ClientOptions>().toExtend<Client>();
    // The compiled options are themselves client options: the connector builds its client from them.
    expectTypeOf<CompiledClientOptions>().toExtend<ClientOptions>();
  });

  it('of every other part', () => {
    expectTypeOf<Input<typeof keyRingOptionsShape>>().toEqualTypeOf<KeyRingOptions>();
    expectTypeOf<Input<typeof loggerOptionsSchema>>().toEqualTypeOf<LoggerOptions>();
    expectTypeOf<Input<typeof metricsOptionsShape>>().toEqualTypeOf<ConnectorMetricsOptions>();
    expectTypeOf<Input<typeof operationsServerOptionsSchema>>().toEqualTypeOf<OperationsServerOptions>();
    expectTypeOf<Input<typeof userMappingsOptionsSchema>>().toEqualTypeOf<SyncUserMappingsOptions>();
    expectTypeOf<Input<typeof backendOptionsSchema>>().toEqualTypeOf<ReferenceBackendOptions>();
  });
});

describe('the resolved options are exactly what the schemas give', () => {
  it('of the connector, at every level', () => {
    expectTypeOf<Output<typeof connectorOptionsSchema>>().toEqualTypeOf<ResolvedConnectorOptions>();
    expectTypeOf<ResolvedConnectorOptions['poller']>().toEqualTypeOf<Required<PollerOptions>>();
    expectTypeOf<ResolvedConnectorOptions['shutdown']>().toEqualTypeOf<Required<ShutdownOptions>>();
    expectTypeOf<Omit<ResolvedConnectorOptions['sync'], 'sourceRetry'>>().toEqualTypeOf<
      Required<Omit<SyncOptions, 'sourceRetry'>>
    >();
    expectTypeOf<ResolvedConnectorOptions['sync']['sourceRetry']>().toEqualTypeOf<
      Required<NonNullable<SyncOptions['sourceRetry']>>
    >();
    expectTypeOf<ResolvedConnectorOptions['now']>().toEqualTypeOf<() => number>();
  });

  it('of the client', () => {
    expectTypeOf<Output<typeof clientOptionsSchema>>().toEqualTypeOf<CompiledClientOptions>();
  });

  it('of every other part', () => {
    expectTypeOf<Output<typeof keyRingOptionsShape>>().toEqualTypeOf<{
      keyLifetimeMs: number;
      rotationMarginMs: number;
      now: () => number;
      onNewKey?: KeyRingOptions['onNewKey'];
    }>();
    expectTypeOf<Output<typeof loggerOptionsSchema>>().toEqualTypeOf<ResolvedLoggerOptions>();
    expectTypeOf<Output<typeof metricsOptionsShape>>().toEqualTypeOf<ResolvedMetricsOptions>();
    expectTypeOf<
      Output<typeof operationsServerOptionsSchema>
    >().toEqualTypeOf<ResolvedOperationsServerOptions>();
    expectTypeOf<Output<typeof backendOptionsSchema>>().toEqualTypeOf<CompiledOptions>();
    expectTypeOf<Output<typeof userMappingsOptionsSchema>>().toEqualTypeOf<{
      batchSize: number;
      pageSize: number;
      maxListed: number;
      signal?: AbortSignal | undefined;
    }>();
  });
});
