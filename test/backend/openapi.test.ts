import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints } from '../../src/api/index.js';
import { buildOpenApiDocument, type ReferenceBackend } from '../../src/backend/index.js';
import { call, start } from './helpers.js';

let backend: ReferenceBackend;
beforeAll(async () => {
  ({ backend } = await start());
});
afterAll(() => backend.close());

describe('OpenAPI document', () => {
  it('is served without authentication and describes all 18 endpoints', async () => {
    const answer = await call(backend, 'GET', '/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.body.openapi).toBe('3.1.0');
    const operations = Object.values(
      answer.body.paths as Record<string, Record<string, { operationId: string }>>,
    ).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
    expect(operations.sort()).toEqual(Object.keys(endpoints).sort());
    expect(answer.body.paths['/v2/connector/uitemplates'].get.requestBody).toBeDefined();
    expect(answer.body.paths['/v1/orgs/{id}/users/bulk'].post.parameters[0]).toMatchObject({
      name: 'id',
      in: 'path',
      required: true,
    });
    expect(
      answer.body.paths['/v2/rawapprovals'].get.parameters.map((p: { name: string }) => p.name),
    ).toContain('lastModified[gt]');
  });

  it('matches the committed docs/openapi.json (run `npm run openapi` after changing a schema)', () => {
    const file = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(buildOpenApiDocument());
  });
});
