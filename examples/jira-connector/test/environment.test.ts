import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { ValidationError } from 'approval-connector-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JiraSimulator } from '../simulator/simulator.js';
import { readEnvironment } from '../src/environment.js';

const JIRA = {
  JIRA_BASE_URL: 'https://your-domain.atlassian.net',
  JIRA_EMAIL: 'jira-sync@example.com',
  JIRA_API_TOKEN: 'ATATT-sync-token',
  JIRA_JQL: 'project = ITSM',
};
const SYSTEM_ID = '7b2e9d40-5c61-4f18-a3d2-9e0b8c7f6a15';

function refusal(env: Record<string, string>): ValidationError {
  try {
    readEnvironment(env);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

function paths(error: ValidationError): string[] {
  return error.issues.map(({ path }) => path.join('.'));
}

describe('readEnvironment', () => {
  it("takes Atlassian's gateway for scoped API tokens, keeping its path, as .env.example says", () => {
    const gateway = 'https://api.atlassian.com/ex/jira/6e8a3b2c-1d4f-4a5b-9c7d-0e1f2a3b4c5d';
    const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');

    expect(readEnvironment({ ...JIRA, JIRA_BASE_URL: gateway }).baseUrl).toBe(gateway);
    expect(example).toContain('https://api.atlassian.com/ex/jira/<cloud id>');
  });

  it('reads the site, the sync account, the JQL and the request types', () => {
    expect(readEnvironment({ ...JIRA, JIRA_REQUEST_TYPES: '10, 11,10' })).toEqual({
      baseUrl: 'https://your-domain.atlassian.net/',
      email: 'jira-sync@example.com',
      apiToken: 'ATATT-sync-token',
      jql: 'project = ITSM',
      requestTypes: ['10', '11'],
      webhook: 'manual',
    });
  });

  it('registers the webhook with JIRA_WEBHOOK=register, leaves it to an administrator otherwise, and refuses another value', () => {
    expect(readEnvironment({ ...JIRA, JIRA_WEBHOOK: 'register' }).webhook).toBe('register');
    expect(readEnvironment({ ...JIRA, JIRA_WEBHOOK: '' }).webhook).toBe('manual');
    expect(paths(refusal({ ...JIRA, JIRA_WEBHOOK: 'dynamic' }))).toEqual(['JIRA_WEBHOOK']);
  });

  it('reports every missing variable at once, an empty one counting as unset', () => {
    const error = refusal({ JIRA_EMAIL: '' });

    expect(error.code).toBe('validation');
    expect(paths(error)).toEqual(['JIRA_BASE_URL', 'JIRA_EMAIL', 'JIRA_API_TOKEN', 'JIRA_JQL']);
  });

  it('reports every invalid variable by its name, and never the tokens', () => {
    const error = refusal({
      ...JIRA,
      JIRA_BASE_URL: 'ftp://fred:secret@your-domain.atlassian.net',
      JIRA_JQL: 'project = ITSM ORDER BY key',
      JIRA_REQUEST_TYPES: 'hardware',
      APPROVAL_MANAGEMENT_TOKEN: 'management-secret',
      APPROVAL_SYSTEM_ID: 'jira',
    });

    expect(paths(error)).toEqual([
      'JIRA_BASE_URL',
      'JIRA_JQL',
      'JIRA_REQUEST_TYPES',
      'APPROVAL_SERVICE_URL',
      'APPROVAL_SYSTEM_ID',
    ]);
    expect(error.message).toContain('JIRA_JQL: must not have an ORDER BY clause');
    expect(error.message).not.toMatch(/secret|ATATT-sync-token/);
  });

  it('keeps the user mappings when a management token comes with the service and the system', () => {
    const settings = readEnvironment({
      ...JIRA,
      APPROVAL_SERVICE_URL: 'http://127.0.0.1:8080',
      APPROVAL_MANAGEMENT_TOKEN: 'management-token',
      APPROVAL_SYSTEM_ID: SYSTEM_ID,
    });

    expect(settings.userMappings).toEqual({
      serviceUrl: 'http://127.0.0.1:8080',
      managementToken: 'management-token',
      systemId: SYSTEM_ID,
    });
    expect(readEnvironment(JIRA).userMappings).toBeUndefined();
  });

  it('refuses a system id without the management token the mappings need', () => {
    expect(paths(refusal({ ...JIRA, APPROVAL_SYSTEM_ID: SYSTEM_ID }))).toEqual(['APPROVAL_MANAGEMENT_TOKEN']);
  });
});

describe('.env.example', () => {
  const example = parseEnv(readFileSync(new URL('../.env.example', import.meta.url), 'utf8'));
  let simulator: JiraSimulator;

  beforeAll(async () => {
    simulator = await JiraSimulator.start({ seed: 1 }); // what `npm run simulator` starts
  });
  afterAll(() => simulator.close());

  it("holds the simulator's sync account, JQL and request types, and reads without a problem", () => {
    const { JIRA_BASE_URL: _, ...site } = simulator.connectorEnv();

    expect(example).toMatchObject(site);
  });

  it('keeps the user mappings of the organization and system `npm run service` seeds, as copied', () => {
    const seed = JSON.parse(readFileSync(new URL('../simulator/service-seed.json', import.meta.url), 'utf8'));
    const [organization] = seed.organizations;

    expect(readEnvironment(example).userMappings).toEqual({
      serviceUrl: 'http://127.0.0.1:8080',
      managementToken: organization.managementTokens[0],
      systemId: organization.systems[0].id,
    });
  });
});
