import { parseArgs } from 'node:util';
import pino from 'pino';
import {
  type ReferenceBackend,
  readSeedFile,
  type Seed,
  startReferenceBackend,
} from '../../backend/index.js';
import { ApprovalKitError } from '../../errors.js';
import { isPort } from '../../internal/port.js';
import { onShutdownSignal } from '../../internal/signals.js';

const USAGE = `Usage: connector backend [--port N] [--host HOST] [--data FILE] [--seed FILE]

Runs the reference backend: the Approval Service's Management API (v1) and Integration API (v2), an admin API
under /admin, and the OpenAPI document at /openapi.json.

Options:
  --port N       TCP port (default 8080; 0 picks a free one)
  --host HOST    interface to listen on (default 127.0.0.1)
  --data FILE    keep the data in this SQLite file (default: in memory)
  --seed FILE    load this seed JSON file when the store is empty
  -h, --help     show this help

Environment:
  APPROVAL_ADMIN_TOKEN  the admin API's token, never printed (default: a random one, printed at start)
  LOG_LEVEL             pino level (default info)`;

/** `connector backend`: runs until SIGINT or SIGTERM, then closes and resolves with the exit code. */
export async function runBackendCommand(argv: readonly string[]): Promise<number> {
  let values: { port?: string; host?: string; data?: string; seed?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        data: { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 1;
  }
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  const port = values.port === undefined ? 8080 : Number(values.port);
  // Digits only: Number() would also read ' 80', '0x50' and '8e1'.
  if (!/^\d+$/.test(values.port ?? '0') || !isPort(port)) {
    console.error(`Expected --port to be a number from 0 to 65535, got \`${values.port}\``);
    return 1;
  }

  // An admin token the operator chose is theirs to know: only a generated one is printed.
  const chosenAdminToken = process.env.APPROVAL_ADMIN_TOKEN || undefined;
  const logger = pino({
    level: process.env.LOG_LEVEL ?? 'info',
    redact: ['req.headers.authorization', 'headers.authorization', 'token'],
  });
  // Listening before the server starts, so a signal that comes during start-up still stops it cleanly.
  const signal = onShutdownSignal();
  let seed: Seed | undefined;
  let backend: ReferenceBackend;
  try {
    seed = values.seed === undefined ? undefined : readSeedFile(values.seed);
    backend = await startReferenceBackend({
      port,
      host: values.host ?? '127.0.0.1',
      ...(values.data === undefined ? {} : { dataFile: values.data }),
      ...(seed === undefined ? {} : { seed }),
      ...(chosenAdminToken === undefined ? {} : { adminToken: chosenAdminToken }),
      logger,
    });
  } catch (error) {
    console.error(
      error instanceof ApprovalKitError || error instanceof Error ? error.message : String(error),
    );
    return 1;
  }

  console.log(banner(backend, seed, values.data, chosenAdminToken === undefined));
  logger.info({ signal: await signal }, 'shutting down');
  await backend.close();
  logger.info('stopped');
  return 0;
}

function banner(
  backend: ReferenceBackend,
  seed: Seed | undefined,
  dataFile: string | undefined,
  adminTokenGenerated: boolean,
): string {
  const adminToken = adminTokenGenerated ? backend.adminToken : '<APPROVAL_ADMIN_TOKEN>';
  const lines = [
    '',
    `Reference backend listening on ${backend.url}`,
    `  store:    ${dataFile ?? 'in memory (gone on exit; use --data FILE to keep it)'}`,
    `  openapi:  ${backend.url}/openapi.json`,
    `  admin:    ${backend.url}/admin/...  with  Authorization: Bearer ${adminToken}`,
    '',
    'Authenticate with Authorization: Bearer <token>. Management tokens open /v1 for their organization;',
    'connector tokens open /v2 for their system.',
  ];
  for (const org of seed?.organizations ?? []) {
    lines.push('', `Organization ${org.name}${org.id === undefined ? '' : ` (${org.id})`}`);
    for (const token of org.managementTokens) lines.push(`  management token: ${token}`);
    for (const system of org.systems) {
      lines.push(`  system ${system.name}${system.id === undefined ? '' : ` (${system.id})`}`);
      for (const token of system.connectorTokens) lines.push(`    connector token: ${token}`);
    }
  }
  const example = seed?.organizations.flatMap((org) => org.managementTokens)[0] ?? '<management token>';
  lines.push(
    '',
    'Try:',
    `  curl -H 'Authorization: Bearer ${example}' ${backend.url}/v1/systems`,
    '',
    'Stop with Ctrl+C.',
  );
  return lines.join('\n');
}
