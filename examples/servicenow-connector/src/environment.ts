/**
 * The connector's own configuration, read from the worker's environment: the instance, the integration user, the
 * approved tables, and, optionally, what the user mappings need. Every problem is reported at once, each named by its
 * variable, in one `ValidationError` (the worker refuses it with exit code 2); the password's value never shows. An
 * empty variable counts as unset, as the kit's own variables do.
 * @module
 */
import { ValidationError, type ValidationIssue } from 'approval-connector-kit';
import { checkInstanceUrl, checkPassword, checkUsername } from './checks.js';
import type { Checked } from './errors.js';

/** What the environment configures. */
export interface ServiceNowEnvironment {
  /** `SERVICENOW_INSTANCE_URL`: the instance, such as `https://example.service-now.com`. */
  instanceUrl: string;
  /**
   * `SERVICENOW_USER` and `SERVICENOW_PASSWORD`: the integration user the sync, reconciliation and the lookups
   * after tasks read with (in every role: a worker of role `tasks` looks its tasks' approvals up too).
   */
  integrationUser: { username: string; password: string };
  /** `SERVICENOW_TABLES`: the approved tables whose approvals are synced. */
  tables: string[];
  /**
   * Present when `APPROVAL_MANAGEMENT_TOKEN` is set: the service (`APPROVAL_SERVICE_URL`), a management token of
   * the organization and the system (`APPROVAL_SYSTEM_ID`) whose user mappings the connector keeps.
   */
  userMappings?: { serviceUrl: string; managementToken: string; systemId: string };
}

/** The approved tables synced when `SERVICENOW_TABLES` is unset: change requests and requested items. */
export const DEFAULT_TABLES: readonly string[] = ['change_request', 'sc_req_item'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Reads the connector's configuration from `env`.
 * @throws {ValidationError} listing every missing or invalid variable.
 */
export function readEnvironment(env: Readonly<Record<string, string | undefined>>): ServiceNowEnvironment {
  const issues: ValidationIssue[] = [];
  const set = (name: string) => (env[name] === '' ? undefined : env[name]);
  const read = <T>(name: string, required: string | undefined, check: (value: string) => Checked<T>) => {
    const value = set(name);
    if (value === undefined) {
      if (required !== undefined)
        issues.push({ path: [name], message: `is required: ${required}`, code: 'invalid_type' });
      return undefined;
    }
    const checked = check(value);
    if (!checked.ok) issues.push({ path: [name], message: checked.problem, code: 'custom' });
    return checked.ok ? checked.value : undefined;
  };

  const user = 'the integration user the sync reads with';
  const instanceUrl = read(
    'SERVICENOW_INSTANCE_URL',
    'the instance, such as https://example.service-now.com',
    checkInstanceUrl,
  );
  const username = read('SERVICENOW_USER', user, checkUsername);
  const password = read('SERVICENOW_PASSWORD', `the password of ${user}`, checkPassword);
  const tables = read('SERVICENOW_TABLES', undefined, checkTables) ?? [...DEFAULT_TABLES];
  const userMappings = readUserMappings(set, read, issues);

  if (issues.length > 0) throw new ValidationError('ServiceNow connector settings', issues);
  return {
    instanceUrl: instanceUrl!.href,
    integrationUser: { username: username!, password: password! },
    tables,
    ...(userMappings === undefined ? {} : { userMappings }),
  };
}

function readUserMappings(
  set: (name: string) => string | undefined,
  read: <T>(
    name: string,
    required: string | undefined,
    check: (value: string) => Checked<T>,
  ) => T | undefined,
  issues: ValidationIssue[],
): ServiceNowEnvironment['userMappings'] {
  const managementToken = set('APPROVAL_MANAGEMENT_TOKEN');
  if (managementToken === undefined) {
    if (set('APPROVAL_SYSTEM_ID') !== undefined) {
      issues.push({
        path: ['APPROVAL_MANAGEMENT_TOKEN'],
        message: 'is required with APPROVAL_SYSTEM_ID: the user mappings need a management token',
        code: 'invalid_type',
      });
    }
    return undefined;
  }
  // The worker checks the service's URL itself.
  const serviceUrl = read(
    'APPROVAL_SERVICE_URL',
    'the user mappings (APPROVAL_MANAGEMENT_TOKEN is set) reach the service there',
    (value) => ({ ok: true, value }),
  );
  const systemId = read(
    'APPROVAL_SYSTEM_ID',
    'the system whose user mappings to keep (APPROVAL_MANAGEMENT_TOKEN is set)',
    (value): Checked<string> =>
      UUID.test(value)
        ? { ok: true, value }
        : { ok: false, problem: `must be the system's id, a UUID, got ${JSON.stringify(value)}` },
  );
  return serviceUrl === undefined || systemId === undefined
    ? undefined
    : { serviceUrl, managementToken, systemId };
}

/** `change_request,sc_req_item`: table names, separated by commas. */
export function checkTables(value: string): Checked<string[]> {
  const tables = value.split(',').map((table) => table.trim());
  if (!tables.every((table) => /^[a-z][a-z0-9_]{0,79}$/.test(table))) {
    return {
      ok: false,
      problem: `must be table names separated by commas, such as "change_request,sc_req_item", got ${JSON.stringify(value)}`,
    };
  }
  return { ok: true, value: [...new Set(tables)] };
}
