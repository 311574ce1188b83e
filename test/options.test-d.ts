import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { ReferenceBackendOptions } from '../src/backend/index.js';
import type { backendOptionsSchema } from '../src/backend/options.js';
import type { ClientOptions, clientOptionsSchema } from '../src/client/options.js';
import type { SyncUserMappingsOptions, userMappingsOptionsSchema } from '../src/client/user-mappings.js';
import type {
  ConnectorOptions,
  connectorOptionsSchema,
  PollerOptions,
  ShutdownOptions,
  SyncOptions,
} from '../src/worker/core/connector-options.js';
import type { KeyRingOptions, keyRingOptionsShape } from '../src/worker/keys/key-ring.js';
import type { LoggerOptions, loggerOptionsSchema } from '../src/worker/operations/logger.js';
import type { ConnectorMetricsOptions, metricsOptionsShape } from '../src/worker/operations/metrics.js';
import type {
  OperationsServerOptions,
  operationsServerOptionsSchema,
} from '../src/worker/operations/server.js';

type Input<S extends z.ZodType> = z.input<S>;
type Output<S extends z.ZodType> = z.output<S>;
type Connector = Input<typeof connectorOptionsSchema>;

// Each option is documented once, on its interface; the schema that checks it must take exactly those keys.
describe('the options schemas take exactly the documented options', () => {
  it('of the connector, at every level', () => {
    expectTypeOf<keyof Connector>().toEqualTypeOf<keyof ConnectorOptions>();
    expectTypeOf<keyof NonNullable<Connector['sync']>>().toEqualTypeOf<keyof SyncOptions>();
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
    expectTypeOf<Output<typeof clientOptionsSchema>>().toExtend<ClientOptions>();
  });

  it('of every other part', () => {
    expectTypeOf<keyof Input<typeof keyRingOptionsShape>>().toEqualTypeOf<keyof KeyRingOptions>();
    expectTypeOf<keyof Input<typeof loggerOptionsSchema>>().toEqualTypeOf<keyof LoggerOptions>();
    expectTypeOf<keyof Input<typeof metricsOptionsShape>>().toEqualTypeOf<keyof ConnectorMetricsOptions>();
    expectTypeOf<keyof Input<typeof operationsServerOptionsSchema>>().toEqualTypeOf<
      keyof OperationsServerOptions
    >();
    expectTypeOf<keyof Input<typeof userMappingsOptionsSchema>>().toEqualTypeOf<
      keyof SyncUserMappingsOptions
    >();
    expectTypeOf<keyof Input<typeof backendOptionsSchema>>().toEqualTypeOf<keyof ReferenceBackendOptions>();
    expectTypeOf<KeyRingOptions>().toExtend<Input<typeof keyRingOptionsShape>>();
    expectTypeOf<LoggerOptions>().toExtend<Input<typeof loggerOptionsSchema>>();
    expectTypeOf<ConnectorMetricsOptions>().toExtend<Input<typeof metricsOptionsShape>>();
    expectTypeOf<OperationsServerOptions>().toExtend<Input<typeof operationsServerOptionsSchema>>();
    expectTypeOf<SyncUserMappingsOptions>().toExtend<Input<typeof userMappingsOptionsSchema>>();
    expectTypeOf<ReferenceBackendOptions>().toExtend<Input<typeof backendOptionsSchema>>();
  });

  it('compiles them fully defaulted', () => {
    type Compiled = Output<typeof connectorOptionsSchema>;
    expectTypeOf<Compiled['poller']>().toEqualTypeOf<Required<PollerOptions>>();
    expectTypeOf<Compiled['shutdown']>().toEqualTypeOf<Required<ShutdownOptions>>();
    expectTypeOf<Omit<Compiled['sync'], 'sourceRetry'>>().toEqualTypeOf<
      Required<Omit<SyncOptions, 'sourceRetry'>>
    >();
    expectTypeOf<Compiled['sync']['sourceRetry']>().toEqualTypeOf<
      Required<NonNullable<SyncOptions['sourceRetry']>>
    >();
    expectTypeOf<Compiled['now']>().toEqualTypeOf<() => number>();
    expectTypeOf<Output<typeof userMappingsOptionsSchema>>().toEqualTypeOf<{
      batchSize: number;
      pageSize: number;
      maxListed: number;
      signal?: AbortSignal | undefined;
    }>();
  });
});
