/**
 * The reference backend of the local loop: started with a development seed (or the developer's own), each
 * connector's system and tokens found in it, and the banner that says where everything is.
 * @module
 */
import type { Logger as PinoLogger } from 'pino';
import {
  parseSeed,
  type ReferenceBackend,
  readSeedFile,
  type Seed,
  type SeedInput,
  type SystemRecord,
  startReferenceBackend,
} from '../../backend/index.js';
import { ValidationError } from '../../errors.js';

/** The management token of the development organization. */
const DEV_MANAGEMENT_TOKEN = 'dev-management-token';

/** The approvers of the development organization, mapped in every system by these ids. */
const DEV_APPROVERS = [
  { systemUserId: 'ada', email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
  { systemUserId: 'grace', email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
] as const;

/** The connector token of a connector's system in the development seed: known, so that it survives restarts. */
function devConnectorToken(name: string): string {
  return `dev-connector-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

/**
 * The development seed: an organization `Development` with a management token and two approvers, and a system per
 * connector, named after it, with its connector token and the approvers mapped (`ada`, `grace`).
 */
function devSeed(connectorNames: readonly string[]): SeedInput {
  return {
    organizations: [
      {
        name: 'Development',
        managementTokens: [DEV_MANAGEMENT_TOKEN],
        users: DEV_APPROVERS.map(({ email, firstName, lastName }) => ({ email, firstName, lastName })),
        systems: connectorNames.map((name) => ({
          name,
          connectorTokens: [devConnectorToken(name)],
          userMappings: DEV_APPROVERS.map(({ email, systemUserId }) => ({ email, systemUserId })),
        })),
      },
    ],
  };
}

/** The connector tokens a seed gives its systems, a system's first one each, in the seed's order. */
function connectorTokensOf(seed: Seed): string[] {
  return seed.organizations.flatMap((org) =>
    org.systems.flatMap((system) => system.connectorTokens.slice(0, 1)),
  );
}

/** Where a connector works in the backend, and what a developer needs to reach it there. */
export interface ConnectorTenant {
  system: SystemRecord;
  connectorToken: string;
  /** What the seed says of the system's organization, when the seed holds the token. */
  organization?: { name: string; managementToken?: string };
  /** The approvers the seed maps in the system: their id in the system, and their name. */
  approvers: { systemUserId: string; name: string }[];
}

/** Options of {@link startDevBackend}. */
export interface DevBackendOptions {
  port: number;
  dataFile?: string | undefined;
  /** A seed, or the path of a seed file; the development seed of the connectors by default. */
  seed?: SeedInput | string | undefined;
  adminToken?: string | undefined;
  logger: PinoLogger;
  /** The connectors, each with the token of its system (by default, the seed's systems' tokens in order). */
  connectors: readonly { name: string; connectorToken?: string | undefined }[];
}

/**
 * Starts the backend with its seed and finds each connector's system by its token. A seed that cannot be read, or
 * a store that holds no system for a connector's token (a data file seeded otherwise), is a `ValidationError`, the
 * backend closed again.
 */
export async function startDevBackend(
  options: DevBackendOptions,
): Promise<{ backend: ReferenceBackend; tenants: ConnectorTenant[] }> {
  // Read here for its tokens and names, and given to the backend as read, as `connector backend` does.
  const seed =
    typeof options.seed === 'string'
      ? readSeedFile(options.seed)
      : parseSeed(options.seed ?? devSeed(options.connectors.map(({ name }) => name)));
  const seedTokens = connectorTokensOf(seed);
  // Refused before anything starts.
  const tokens = options.connectors.map(({ name, connectorToken }, index) => {
    const token = connectorToken ?? seedTokens[index];
    if (token === undefined)
      throw refused(`The seed has no system with a connector token for the connector ${name}`);
    return token;
  });
  const backend = await startReferenceBackend({
    port: options.port,
    seed,
    logger: options.logger,
    ...(options.dataFile === undefined ? {} : { dataFile: options.dataFile }),
    ...(options.adminToken === undefined ? {} : { adminToken: options.adminToken }),
  });
  try {
    const tenants = options.connectors.map(({ name }, index) => {
      const token = tokens[index]!;
      const system = backend.systemOfToken(token);
      if (system === undefined) {
        throw refused(
          `${options.dataFile ?? 'The store'} holds no system for the connector token of ${name}: it was seeded for other connectors or with another seed; give another --data file`,
        );
      }
      return { system, connectorToken: token, ...describe(seed, token) };
    });
    return { backend, tenants };
  } catch (error) {
    await backend.close();
    throw error;
  }
}

/**
 * The backend's part of a start banner: where it listens, the console's one-time link, where its data is kept, the
 * OpenAPI document and the admin API, whose token is shown only when the backend made it.
 */
export function backendBanner(
  backend: ReferenceBackend,
  {
    dataFile,
    adminTokenGenerated,
    consoleLink = backend.createConsoleLink(),
  }: {
    dataFile: string | undefined;
    adminTokenGenerated: boolean;
    /** The link to print, when the banner prints it again further down: a new one each call otherwise. */
    consoleLink?: string;
  },
): string[] {
  const adminToken = adminTokenGenerated ? backend.adminToken : '<APPROVAL_ADMIN_TOKEN>';
  return [
    `Reference backend listening on ${backend.url}`,
    `  console:  ${consoleLink}`,
    '            (the link signs one browser in, once, within an hour)',
    `  store:    ${dataFile ?? 'in memory (gone on exit; use --data FILE to keep it)'}`,
    `  openapi:  ${backend.url}/openapi.json`,
    `  admin:    ${backend.url}/admin/...  with  Authorization: Bearer ${adminToken}`,
  ];
}

function refused(message: string): ValidationError {
  return new ValidationError('development backend', [{ code: 'custom', path: [], message }]);
}

/** What the seed says of the organization and the approvers of the system that `token` opens. */
function describe(seed: Seed, token: string): Pick<ConnectorTenant, 'organization' | 'approvers'> {
  for (const org of seed.organizations) {
    const system = org.systems.find(({ connectorTokens }) => connectorTokens.includes(token));
    if (system === undefined) continue;
    const approvers = system.userMappings.flatMap(({ email, systemUserId }) => {
      const user = org.users.find((candidate) => candidate.email.toLowerCase() === email.toLowerCase());
      return user === undefined ? [] : [{ systemUserId, name: `${user.firstName} ${user.lastName}` }];
    });
    const managementToken = org.managementTokens[0];
    return {
      organization: { name: org.name, ...(managementToken === undefined ? {} : { managementToken }) },
      approvers,
    };
  }
  return { approvers: [] };
}
