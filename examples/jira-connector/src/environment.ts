/**
 * The connector's own configuration, read from the worker's environment: the Jira site, the sync account, the JQL,
 * the request types to publish UI templates for, and, optionally, what the user mappings need. Every problem is
 * reported at once, each named by its variable, in one `ValidationError` (the worker refuses it with exit code 2);
 * the values of the tokens are never shown. An empty variable counts as unset, as the kit's own variables do.
 * @module
 */
import { ValidationError, type ValidationIssue } from 'approval-connector-kit';
import type { Checked } from './errors.js';
import { checkApiToken, checkBaseUrl, checkEmail } from './jira-client.js';
import { checkJql } from './jql.js';

/** What the environment configures. */
export interface JiraEnvironment {
  /** `JIRA_BASE_URL`: the site, such as `https://your-domain.atlassian.net`. */
  baseUrl: string;
  /** `JIRA_EMAIL`: the sync account's email. */
  email: string;
  /** `JIRA_API_TOKEN`: the sync account's API token. */
  apiToken: string;
  /** `JIRA_JQL`: the requests to sync, such as `project = ITSM`. */
  jql: string;
  /** `JIRA_REQUEST_TYPES`: ids of the request types to publish a UI template for; none when unset. */
  requestTypes: string[];
  /** `JIRA_WEBHOOK`: who keeps the Jira webhook that pushes changes, `register` (the connector) or `manual` (not it). */
  webhook: 'register' | 'manual';
  /**
   * Present when `APPROVAL_MANAGEMENT_TOKEN` is set: the service (`APPROVAL_SERVICE_URL`), a management token of
   * the organization and the system (`APPROVAL_SYSTEM_ID`) whose user mappings the connector keeps.
   */
  userMappings?: { serviceUrl: string; managementToken: string; systemId: string };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Reads the connector's configuration from `env`.
 * @throws {ValidationError} listing every missing or invalid variable.
 */
export function readEnvironment(env: Readonly<Record<string, string | undefined>>): JiraEnvironment {
  const issues: ValidationIssue[] = [];
  const set = (name: string) => (env[name] === '' ? undefined : env[name]);
  const read = <T>(name: string, what: string, check: (value: string) => Checked<T>): T | undefined => {
    const value = set(name);
    if (value === undefined) {
      issues.push({ path: [name], message: `is required: ${what}`, code: 'invalid_type' });
      return undefined;
    }
    const checked = check(value);
    if (!checked.ok) issues.push({ path: [name], message: checked.problem, code: 'custom' });
    return checked.ok ? checked.value : undefined;
  };

  const baseUrl = read(
    'JIRA_BASE_URL',
    'the Jira site, such as https://your-domain.atlassian.net',
    checkBaseUrl,
  );
  const email = read('JIRA_EMAIL', "the sync account's email", checkEmail);
  const apiToken = read('JIRA_API_TOKEN', "an API token of the sync account's", checkApiToken);
  const jql = read('JIRA_JQL', 'the requests to sync, such as "project = ITSM"', checkJql);
  const requestTypes = checkRequestTypes(set('JIRA_REQUEST_TYPES'));
  if (!requestTypes.ok)
    issues.push({ path: ['JIRA_REQUEST_TYPES'], message: requestTypes.problem, code: 'custom' });
  const webhook = set('JIRA_WEBHOOK') ?? 'manual';
  if (webhook !== 'register' && webhook !== 'manual') {
    issues.push({
      path: ['JIRA_WEBHOOK'],
      message: `must be "register" (the connector registers its webhook) or "manual" (it does not), got ${JSON.stringify(webhook)}`,
      code: 'custom',
    });
  }

  let userMappings: JiraEnvironment['userMappings'];
  const managementToken = set('APPROVAL_MANAGEMENT_TOKEN');
  if (managementToken !== undefined) {
    const serviceUrl = read(
      'APPROVAL_SERVICE_URL',
      'the user mappings (APPROVAL_MANAGEMENT_TOKEN is set) reach the service there',
      (value) => ({ ok: true, value }), // the worker has checked it
    );
    const systemId = read(
      'APPROVAL_SYSTEM_ID',
      'the system whose user mappings to keep (APPROVAL_MANAGEMENT_TOKEN is set)',
      (value): Checked<string> =>
        UUID.test(value)
          ? { ok: true, value }
          : { ok: false, problem: `must be the system's id, a UUID, got ${JSON.stringify(value)}` },
    );
    if (serviceUrl !== undefined && systemId !== undefined) {
      userMappings = { serviceUrl, managementToken, systemId };
    }
  } else if (set('APPROVAL_SYSTEM_ID') !== undefined) {
    issues.push({
      path: ['APPROVAL_MANAGEMENT_TOKEN'],
      message: 'is required with APPROVAL_SYSTEM_ID: the user mappings need a management token',
      code: 'invalid_type',
    });
  }

  if (issues.length > 0) throw new ValidationError('Jira connector settings', issues);
  return {
    baseUrl: baseUrl!.href,
    email: email!,
    apiToken: apiToken!,
    jql: jql!,
    requestTypes: requestTypes.ok ? requestTypes.value : [],
    webhook: webhook as 'register' | 'manual',
    ...(userMappings === undefined ? {} : { userMappings }),
  };
}

/** `10,11,12`: request type ids, comma-separated; unset is none. */
export function checkRequestTypes(value: string | undefined): Checked<string[]> {
  if (value === undefined) return { ok: true, value: [] };
  const ids = value.split(',').map((id) => id.trim());
  if (!ids.every((id) => checkRequestTypeId(id).ok)) {
    return {
      ok: false,
      problem: `must be request type ids separated by commas, such as "10,11,12", got ${JSON.stringify(value)}`,
    };
  }
  return { ok: true, value: [...new Set(ids)] };
}

/** A request type's id: Jira's are numbers. */
export function checkRequestTypeId(id: unknown): Checked<string> {
  return typeof id === 'string' && /^\d+$/.test(id)
    ? { ok: true, value: id }
    : { ok: false, problem: `must hold request type ids, such as "10", got ${JSON.stringify(id)}` };
}
