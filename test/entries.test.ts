import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

// Each entry of the package exports the names pinned below, and no others: a name added to an entry, or taken
// from it, is a decision, made here in review. Types are names too, though they are gone at run time, so the lists
// come from the TypeScript compiler, as a user's editor sees them. A type-only name reads `type Name`.

const root = fileURLToPath(new URL('..', import.meta.url));

const entries = {
  'approval-connector-kit': 'src/index.ts',
  'approval-connector-kit/client': 'src/client/index.ts',
  'approval-connector-kit/worker': 'src/worker/index.ts',
  'approval-connector-kit/testing': 'src/testing/index.ts',
  'approval-connector-kit/conformance': 'src/conformance/index.ts',
  'approval-connector-kit/backend': 'src/backend/index.ts',
  'approval-connector-kit/check-node': 'src/check-node.ts',
} as const;

const isTypeOnlyAlias = (declaration: ts.Declaration) =>
  ts.isExportSpecifier(declaration) || ts.isImportSpecifier(declaration)
    ? declaration.isTypeOnly || declaration.parent.parent.isTypeOnly
    : ts.isImportClause(declaration) && declaration.isTypeOnly;

/** What each entry's exports make of a name: a value (which may be a type as well), or a type alone. */
function namesOf(program: ts.Program, file: string): string[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(`${root}${file}`);
  if (source === undefined) throw new Error(`${file} is not in the program`);
  const module = checker.getSymbolAtLocation(source);
  if (module === undefined) return [];
  return checker
    .getExportsOfModule(module)
    .map((symbol) => {
      // A value re-exported with `export type` is a type to the importer: follow the aliases, and note any such.
      let typeOnly = false;
      let target = symbol;
      while (target.flags & ts.SymbolFlags.Alias) {
        typeOnly ||= (target.declarations ?? []).some(isTypeOnlyAlias);
        const next = checker.getImmediateAliasedSymbol(target);
        if (next === undefined) throw new Error(`${file}: ${symbol.name} resolves to nothing`);
        target = next;
      }
      return !typeOnly && target.flags & ts.SymbolFlags.Value ? symbol.name : `type ${symbol.name}`;
    })
    .sort((a, b) => a.replace(/^type /, '').localeCompare(b.replace(/^type /, ''), 'en'));
}

/** A name that is how the kit builds its options, not something a user calls. */
const isPlumbing = (name: string) =>
  /OptionsSchema$|OptionsShape$|^resolve[A-Z]|^Resolved[A-Z]|_OPTIONS$/.test(name.replace(/^type /, ''));

let exported: Record<keyof typeof entries, string[]>;

beforeAll(() => {
  const config = ts.getParsedCommandLineOfConfigFile(
    `${root}tsconfig.json`,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (config === undefined) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram(
    Object.values(entries).map((file) => `${root}${file}`),
    { ...config.options, noEmit: true },
  );
  exported = Object.fromEntries(
    Object.entries(entries).map(([entry, file]) => [entry, namesOf(program, file)]),
  ) as typeof exported;
}, 60_000);

describe('the names of each entry', () => {
  it('of the root: what a connector’s own code writes', () => {
    expect(exported['approval-connector-kit']).toEqual([
      'ApprovalKitError',
      'AuthenticationError',
      'type ChangeWindow',
      'classifyFailure',
      'type ClassifyFailureOptions',
      'Connector',
      'type ConnectorFactory',
      'type ConnectorSource',
      'type Credentials',
      'CredentialsUnreadableError',
      'type ErrorCode',
      'type FailureClassification',
      'type FailureMeta',
      'incremental',
      'type IncrementalDeclaration',
      'type IncrementalSource',
      'InvalidConnectorError',
      'isKitError',
      'type KitError',
      'type Logger',
      'type PrecheckVerdict',
      'push',
      'type PushContext',
      'type PushDeclaration',
      'type PushDelivery',
      'runWorker',
      'type RunWorkerOptions',
      'Secret',
      'ServiceUnavailableError',
      'snapshot',
      'type SnapshotDeclaration',
      'type SnapshotSource',
      'type SourceApproval',
      'type SourceContext',
      'type StateAccess',
      'StoppingError',
      'type SyncCursor',
      'SystemError',
      'task',
      'type TaskAbortReason',
      'type TaskContext',
      'TaskDataInvalidError',
      'TaskDeadlineError',
      'type TaskDeclaration',
      'type TaskDeclarations',
      'type TaskOutcome',
      'type TaskSignal',
      'ValidationError',
      'type ValidationIssue',
      'verifyHmacSignature',
      'type WebhookLifecycle',
      'type WebhookRegistration',
      'type WebhookTarget',
      'type WorkerContext',
      'type WorkerRole',
    ]);
  });

  it('of /client: the clients, their options and errors, and the wire types', () => {
    expect(exported['approval-connector-kit/client']).toEqual([
      'AddUserResult',
      'ApiError',
      'type ApiErrorCode',
      'Approval',
      'ApprovalFields',
      'ApprovalKitError',
      'type ApprovalsQuery',
      'ApprovalWrite',
      'BadRequestError',
      'ClientClosedError',
      'type ClientOptions',
      'ConflictError',
      'ConnectorRegistration',
      'ConnectorState',
      'DEFAULT_MAX_RESPONSE_BYTES',
      'EncryptedCredentials',
      'type EndpointName',
      'type ErrorCode',
      'GetUsersQuery',
      'IntegrationClient',
      'InvalidResponseError',
      'isRetryable',
      'type IterateOptions',
      'type LeasedTask',
      'ManagementClient',
      'MAX_APPROVAL_ID_LENGTH',
      'MAX_JSON_DEPTH',
      'NetworkError',
      'NewUser',
      'NewUserMapping',
      'NotFoundError',
      'PageQuery',
      'PagingStalledError',
      'PartialAddUsersError',
      'PayloadTooLargeError',
      'ProtocolMismatchError',
      'RateLimitedError',
      'type Repeatability',
      'type RequestOptions',
      'type RequestTarget',
      'ResponseTooLargeError',
      'type RetryEvent',
      'type RetryReason',
      'ServerError',
      'System',
      'Task',
      'TaskResult',
      'TaskResultStatus',
      'TimeoutError',
      'type TokenSource',
      'UiTemplate',
      'UiTemplateWrite',
      'UnauthorizedError',
      'User',
      'UserMapping',
      'UserQueryField',
      'ValidationError',
      'type ValidationIssue',
      'type ValidationIssueCode',
    ]);
  });

  it('of /worker: what embeds and runs a worker', () => {
    expect(exported['approval-connector-kit/worker']).toEqual([
      'type AppStateOf',
      'type ConnectorFactory',
      'ConnectorMetrics',
      'type ConnectorMetricsOptions',
      'type ConnectorOptions',
      'ConnectorTokenRejectedError',
      'ConnectorWorker',
      'createLogger',
      'FileKeyStore',
      'generateKeyRingData',
      'type HealthReport',
      'InvalidConnectorError',
      'type KeyEvent',
      'KeyRing',
      'KeyRingData',
      'KeyRingInvalidError',
      'type KeyRingOptions',
      'KeyRingUnavailableError',
      'type KeyStore',
      'KeyStoreReadOnlyError',
      'LifecycleError',
      'type LifecycleState',
      'type LoggerOptions',
      'MemoryKeyStore',
      'type NewKeyReason',
      'OperationsServer',
      'OperationsServerClosedError',
      'OperationsServerListenError',
      'type OperationsServerOptions',
      'type PollerOptions',
      'PortInUseError',
      'type PublicKeyInfo',
      'type PushHealthReport',
      'type PushMetrics',
      'type PushOptions',
      'type PushOutcome',
      'type PushReport',
      'type ReadinessCheck',
      'type ReadinessReport',
      'ReadOnlyKeyStore',
      'type ReadOnlyKeyStoreSource',
      'type RenderedMetrics',
      'runConnector',
      'type RunConnectorOptions',
      'type RunReport',
      'runWorker',
      'type RunWorkerOptions',
      'type Schedule',
      'ServiceNotFoundError',
      'SHUTDOWN_MARGIN_MS',
      'ShutdownDeadlineError',
      'type ShutdownOptions',
      'type SignalSource',
      'type StallReadings',
      'StoppingError',
      'type SyncMode',
      'type SyncOptions',
      'type SyncOutcome',
      'syncUserMappings',
      'type SyncUserMappingsOptions',
      'type TaskReportFailure',
      'UnsupportedNodeError',
      'type UserMappingEntry',
      'type UserMappingFailure',
      'type UserMappingsReport',
      'type WebhookCall',
      'type WebhookOptions',
      'type WebhookReport',
      'WORKER_EXIT_CODES',
      'type WorkerContext',
      'type WorkerRole',
    ]);
  });

  it('of /testing: the test harness', () => {
    expect(exported['approval-connector-kit/testing']).toEqual([
      'type CreatedTask',
      'createTestHarness',
      'HarnessTimeoutError',
      'type NewTaskFor',
      'type TaskInputOf',
      'type TaskTypeOf',
      'TestHarness',
      'type TestHarnessOptions',
    ]);
  });

  it('of /conformance: the battery an author runs against their connector', () => {
    expect(exported['approval-connector-kit/conformance']).toEqual([
      'CHECK_NAMES',
      'type CheckResult',
      'type CheckStatus',
      'ConformanceFailure',
      'type ConformanceOptions',
      'type ConformanceReport',
      'type ConformanceSubject',
      'conformanceSuite',
      'type ConformanceSuiteOptions',
      'type ConnectorProcess',
      'type ExpectedApproval',
      'FAILURE_STATUS',
      'type FailureScope',
      'formatReport',
      'type NewSourceRequest',
      'type PushDriver',
      'type PushTarget',
      'type RestoreSource',
      'runConformance',
      'SOURCE_OPERATIONS',
      'type SourceDriver',
      'type SourceFailure',
      'type SourceOperation',
      'type TestRunner',
    ]);
  });

  it('of /backend: the reference backend', () => {
    expect(exported['approval-connector-kit/backend']).toEqual([
      'type ApprovalRecord',
      'buildOpenApiDocument',
      'type Collection',
      'type ConnectorRecord',
      'type ConnectorStateRecord',
      'type DemoSignIn',
      'FaultAction',
      'type FaultEvent',
      'type FaultInfo',
      'type FaultInjector',
      'type FaultListener',
      'FaultRule',
      'type FaultRuleInput',
      'type NewOrganization',
      'type NewSystem',
      'type NewTask',
      'type NewTenant',
      'type NewUserInput',
      'type OpenApiOptions',
      'type Organization',
      'parseSeed',
      'PortInUseError',
      'readSeedFile',
      'ReferenceBackend',
      'type ReferenceBackendOptions',
      'Seed',
      'SeedConsoleSignIn',
      'type SeedInput',
      'SeedOrganization',
      'SeedSystem',
      'SeedUser',
      'SeedUserMapping',
      'ServiceError',
      'type ServiceErrorKind',
      'startReferenceBackend',
      'type StoreChange',
      'type StoreChangeListener',
      'type SystemRecord',
      'type TaskEvent',
      'type TaskInfo',
      'type TaskStatus',
      'type Tenant',
      'type UserRecord',
    ]);
  });

  it('of /check-node: none, it is imported for what it does', () => {
    expect(exported['approval-connector-kit/check-node']).toEqual([]);
  });

  it.each(Object.keys(entries))('of %s hold no option plumbing: schemas, shapes, resolvers', (entry) => {
    expect(exported[entry as keyof typeof entries].filter(isPlumbing)).toEqual([]);
  });

  it('would show the option plumbing the entries once held', () => {
    const heldOnce = [
      'CLIENT_SECRET_OPTIONS',
      'clientOptionsSchema',
      'resolveClientOptions',
      'type ResolvedClientOptions',
      'backendOptionsSchema',
      'keyRingOptionsShape',
    ];
    expect(heldOnce.filter(isPlumbing)).toEqual(heldOnce);
    expect(['type ClientOptions', 'type ReferenceBackendOptions', 'runWorker'].filter(isPlumbing)).toEqual(
      [],
    );
  });
});

describe('the imports of the package that the docs, examples and templates show', () => {
  // Every file a user reads or copies, and the TSDoc of the source (its `@example` blocks).
  const files = ['README.md'].concat(
    ...['docs', 'examples', 'templates', 'packages', 'src'].map((folder) =>
      readdirSync(`${root}${folder}`, { recursive: true, encoding: 'utf8' })
        .filter((file) => /\.(md|ts|js|mjs)$/.test(file) && !/(^|\/)(node_modules|dist)\//.test(file))
        .map((file) => `${folder}/${file}`),
    ),
  );
  const imports = files.flatMap((file) =>
    [
      ...readFileSync(`${root}${file}`, 'utf8').matchAll(
        /import\s+(type\s+)?\{([^}]*)\}\s+from\s+'(approval-connector-kit(?:\/[a-z-]+)?)'/g,
      ),
    ].flatMap(([, , list, entry]) =>
      (list as string)
        .split(',')
        .map((name) =>
          name
            .replace(/^\s*type\s+/, '')
            .replace(/\s+as\s+\w+/, '')
            .trim(),
        )
        .filter((name) => name !== '' && !name.startsWith('//'))
        .map((name) => ({ file, entry: entry as string, name })),
    ),
  );

  it('are found', () => {
    expect(imports.length).toBeGreaterThan(50);
    expect(new Set(imports.map(({ entry }) => entry))).toEqual(
      new Set([
        'approval-connector-kit',
        'approval-connector-kit/client',
        'approval-connector-kit/worker',
        'approval-connector-kit/testing',
        'approval-connector-kit/conformance',
        'approval-connector-kit/backend',
      ]),
    );
  });

  it('each name a name its entry exports', () => {
    const missing = imports.filter(
      ({ entry, name }) =>
        !(entry in exported) ||
        !exported[entry as keyof typeof entries].some((held) => held.replace(/^type /, '') === name),
    );
    expect(missing.map(({ file, entry, name }) => `${file}: ${name} from '${entry}'`)).toEqual([]);
  });
});
