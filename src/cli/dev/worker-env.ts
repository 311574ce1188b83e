/**
 * The environment of a connector's worker in the local loop: the loop's own, what the project's `.env` adds, the
 * connector's variables, then what the loop decides itself: the service, the token, the operations port, and the
 * push ingress, where a simulated source on this machine delivers.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { portText } from '../../internal/options.js';
import type { ConnectorTenant } from './backend.js';

/** What the environment takes of a connector of the loop (a `DevSessionConnector`). */
export interface LoopConnector {
  /** The project folder, whose `.env` is read. */
  project: string;
  tenant: ConnectorTenant;
  operationsUrl: string;
  pushUrl: string;
}

/**
 * What a connector's worker reads before the loop sets its own variables: the loop's environment, what the
 * project's `.env` adds (a variable already set wins, as with `node --env-file`), then the connector's own variables.
 * The admin token of a `.env` is dropped.
 */
export function projectEnvironment(
  project: string,
  own: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string>>,
): Record<string, string> {
  const dotenv = join(project, '.env');
  const { APPROVAL_ADMIN_TOKEN: _admin, ...fromFile } = existsSync(dotenv)
    ? parseEnv(readFileSync(dotenv, 'utf8'))
    : {};
  return { ...fromFile, ...env, ...own } as Record<string, string>;
}

/**
 * The project's own push port (`PUSH_PORT`), when it names one: the loop keeps it when it is free, so that what the
 * project's `.env` tells a source on this machine (a simulator reading the same `.env`, a tunnel to that port) still
 * reaches the worker.
 */
export function wantedPushPort(merged: Readonly<Record<string, string | undefined>>): number | undefined {
  // Read as the worker reads it; 0, a free port, is what the loop picks anyway.
  const wanted = portText().safeParse(merged.PUSH_PORT);
  return wanted.success && wanted.data > 0 ? wanted.data : undefined;
}

/**
 * The worker's environment: the loop's, what the project's `.env` adds (a variable already set wins, as with
 * `node --env-file`), the connector's own variables, then the service, the token, the operations port and the push
 * ingress of the loop.
 */
export function workerEnvironment(
  connector: LoopConnector,
  own: Readonly<Record<string, string>>,
  serviceUrl: string,
  env: Readonly<Record<string, string>>,
): NodeJS.ProcessEnv {
  const merged = projectEnvironment(connector.project, own, env);
  // User mappings asked for (a management token set, as the Jira template's .env does for `npm run service`) go to
  // the loop's own organization and system: another service's token and system mean nothing to this backend.
  const managementToken = connector.tenant.organization?.managementToken;
  const mappings =
    merged.APPROVAL_MANAGEMENT_TOKEN && managementToken !== undefined
      ? { APPROVAL_MANAGEMENT_TOKEN: managementToken, APPROVAL_SYSTEM_ID: connector.tenant.system.id }
      : {};
  return {
    ...merged,
    ...mappings,
    APPROVAL_SERVICE_URL: serviceUrl,
    APPROVAL_CONNECTOR_TOKEN: connector.tenant.connectorToken,
    OPERATIONS_PORT: new URL(connector.operationsUrl).port,
    OPERATIONS_HOST: '127.0.0.1',
    ...pushSettings(connector.pushUrl, merged),
    // The loop reads the worker's lines, and prints them itself.
    LOG_FORMAT: 'json',
  };
}

/**
 * The push ingress of a connector with a push path (a worker without one opens nothing): on the loop's port, the
 * same across restarts, at the address a source on this machine reaches, which a webhook the connector registers
 * is registered for. The project's own `PUSH_PUBLIC_URL` is kept when it is not on this machine (a tunnel to the
 * loop's port, for a source on the internet), and its `PUSH_SECRET`; without one, the loop makes one for the
 * session.
 */
function pushSettings(
  pushUrl: string,
  merged: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const own = merged.PUSH_PUBLIC_URL === undefined ? undefined : URL.parse(merged.PUSH_PUBLIC_URL);
  const elsewhere = own !== null && own !== undefined && !LOOPBACK.has(own.hostname);
  return {
    PUSH_PORT: new URL(pushUrl).port,
    PUSH_HOST: '127.0.0.1',
    PUSH_PUBLIC_URL: elsewhere ? merged.PUSH_PUBLIC_URL! : pushUrl,
    PUSH_SECRET: merged.PUSH_SECRET || randomBytes(24).toString('base64url'),
  };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
