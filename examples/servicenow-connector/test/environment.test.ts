import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { runWorker, ValidationError } from 'approval-connector-kit';
import { WORKER_EXIT_CODES } from 'approval-connector-kit/worker';
import { describe, expect, it } from 'vitest';
import build from '../src/connector.js';
import { DEFAULT_TABLES, readEnvironment } from '../src/environment.js';

// The connector's variables: every problem at once, each by its name, never a password.
const VALID = {
  SERVICENOW_INSTANCE_URL: 'https://example.service-now.com',
  SERVICENOW_USER: 'approval.sync',
  SERVICENOW_PASSWORD: 'sync-Pass-0042',
};

function refusal(env: Record<string, string | undefined>): ValidationError {
  try {
    readEnvironment(env);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('the environment was accepted');
}

describe('readEnvironment', () => {
  it('reads the instance, the integration user and the approved tables, change requests and requested items by default', () => {
    expect(readEnvironment(VALID)).toEqual({
      instanceUrl: 'https://example.service-now.com/',
      integrationUser: { username: 'approval.sync', password: 'sync-Pass-0042' },
      tables: [...DEFAULT_TABLES],
    });
    expect(
      readEnvironment({ ...VALID, SERVICENOW_TABLES: 'change_request, sn_hr_core_case' }).tables,
    ).toEqual(['change_request', 'sn_hr_core_case']);
  });

  it('reads what the user mappings need, and refuses half of it', () => {
    const systemId = 'c3e5a7b9-2d4f-4a6c-8e0b-1f3a5c7e9d2b';
    expect(
      readEnvironment({
        ...VALID,
        APPROVAL_SERVICE_URL: 'http://127.0.0.1:8080',
        APPROVAL_MANAGEMENT_TOKEN: 'local-management-servicenow',
        APPROVAL_SYSTEM_ID: systemId,
      }).userMappings,
    ).toEqual({
      serviceUrl: 'http://127.0.0.1:8080',
      managementToken: 'local-management-servicenow',
      systemId,
    });
    expect(refusal({ ...VALID, APPROVAL_SYSTEM_ID: systemId }).issues.map(({ path }) => path[0])).toEqual([
      'APPROVAL_MANAGEMENT_TOKEN',
    ]);
  });

  it('names every missing or invalid variable at once, an empty one as unset, and never shows the password', () => {
    const error = refusal({
      SERVICENOW_INSTANCE_URL: 'ftp://example',
      SERVICENOW_USER: '',
      SERVICENOW_PASSWORD: 'sync-Pass-0042',
      SERVICENOW_TABLES: 'change_request,Change Request',
      APPROVAL_MANAGEMENT_TOKEN: 'token',
      APPROVAL_SYSTEM_ID: 'not-a-uuid',
    });

    expect(error.issues.map(({ path }) => path[0])).toEqual([
      'SERVICENOW_INSTANCE_URL',
      'SERVICENOW_USER',
      'SERVICENOW_TABLES',
      'APPROVAL_SERVICE_URL',
      'APPROVAL_SYSTEM_ID',
    ]);
    expect(error.message).not.toContain('sync-Pass-0042');
    expect(refusal({ ...VALID, SERVICENOW_PASSWORD: '' }).issues.map(({ path }) => path[0])).toEqual([
      'SERVICENOW_PASSWORD',
    ]);
  });

  it(".env.example holds the simulator's settings, and the user mappings' of the organization and system the seed makes", () => {
    const example = Object.fromEntries(
      readFileSync(new URL('../.env.example', import.meta.url), 'utf8')
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    const seed = JSON.parse(
      readFileSync(new URL('../simulator/service-seed.json', import.meta.url), 'utf8'),
    ) as {
      organizations: { managementTokens: string[]; systems: { id: string }[] }[];
    };
    const [organization] = seed.organizations;

    expect(example).toMatchObject({
      SERVICENOW_INSTANCE_URL: 'http://127.0.0.1:8082',
      SERVICENOW_USER: 'approval.sync',
      SERVICENOW_PASSWORD: 'sync-Now-2026',
      APPROVAL_MANAGEMENT_TOKEN: organization!.managementTokens[0],
      APPROVAL_SYSTEM_ID: organization!.systems[0]!.id,
    });
    expect(
      readEnvironment({ ...example, APPROVAL_SERVICE_URL: 'http://127.0.0.1:8080' }).userMappings,
    ).toBeDefined();
  });

  it('ends the worker the default export builds with exit code 2, before it reaches the service or the instance', async () => {
    const code = await runWorker(build, {
      env: {
        // Nothing listens there: the configuration is refused before either is reached.
        APPROVAL_SERVICE_URL: 'http://127.0.0.1:9',
        APPROVAL_CONNECTOR_TOKEN: 'connector-token',
        LOG_LEVEL: 'silent',
        SERVICENOW_INSTANCE_URL: 'http://127.0.0.1:9',
        SERVICENOW_USER: 'approval.sync',
      },
      argv: [],
      signals: new EventEmitter(),
    });

    expect(code).toBe(WORKER_EXIT_CODES.refused);
  });
});
