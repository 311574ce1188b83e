import { z } from 'zod';
import { type Endpoint, endpoints, V1ErrorBody, V2ErrorBody } from '../../api/index.js';

type JsonSchema = Record<string, unknown>;

/** Options of {@link buildOpenApiDocument}. */
export interface OpenApiOptions {
  /** Base URL listed under `servers`. @default none (paths are relative) */
  serverUrl?: string;
  /** `info.version`. @default '0.2.0' */
  version?: string;
}

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // Dates and transforms have no JSON Schema; `any` keeps the rest of the document instead of failing on them.
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return json;
}

function parameters(schema: z.ZodType | undefined, location: 'path' | 'query'): JsonSchema[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => ({
    name,
    in: location,
    required: location === 'path' || !field.safeParse(undefined).success,
    schema: schemaOf(field, 'input'),
  }));
}

const ERRORS: Record<string, string> = {
  '400': 'The request is invalid (body, query or path).',
  '401': 'The credential is missing, unknown, or of the wrong kind for this API.',
  '404': 'The item does not exist, or belongs to another organization or system.',
  '409': 'The request contradicts stored data.',
  '413': 'The body is larger than the endpoint accepts.',
  '429': 'Rate limited; see Retry-After (seconds).',
  '500': 'A failure on the server side.',
};

function operation(name: string, endpoint: Endpoint): JsonSchema {
  const errorRef = { $ref: `#/components/schemas/${endpoint.api === 'v1' ? 'V1Error' : 'V2Error'}` };
  const responses: Record<string, unknown> = {
    '200': {
      description: 'Success',
      content: { 'application/json': { schema: schemaOf(endpoint.response, 'output') } },
    },
  };
  for (const [status, description] of Object.entries(ERRORS)) {
    responses[status] = { description, content: { 'application/json': { schema: errorRef } } };
  }
  const op: JsonSchema = {
    operationId: name,
    summary: `${endpoint.number}. ${endpoint.summary}`,
    tags: [endpoint.api === 'v1' ? 'Management API (v1)' : 'Integration API (v2)'],
    security: [{ [endpoint.api === 'v1' ? 'managementToken' : 'connectorToken']: [] }],
    parameters: [...parameters(endpoint.params, 'path'), ...parameters(endpoint.query, 'query')],
    responses,
  };
  if (endpoint.body !== undefined) {
    op.requestBody = {
      required: true,
      content: { 'application/json': { schema: schemaOf(endpoint.body, 'input') } },
    };
  }
  if (endpoint.number === 18) {
    op.description = 'Published as GET with a JSON body, and served exactly so.';
  }
  return op;
}

/** The OpenAPI 3.1 document of both APIs, generated from the endpoint table and its zod schemas. */
export function buildOpenApiDocument(options: OpenApiOptions = {}): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const [name, endpoint] of Object.entries(endpoints) as [string, Endpoint][]) {
    const path = endpoint.path.replace(/:([A-Za-z]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][endpoint.method.toLowerCase()] = operation(name, endpoint);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Approval Service',
      version: options.version ?? '0.2.0',
      description:
        'Management API (v1) and Connector Integration API (v2), as the reference backend serves them. ' +
        'Decisions where the published spec is silent are in docs/api-contract.md.',
    },
    ...(options.serverUrl === undefined ? {} : { servers: [{ url: options.serverUrl }] }),
    tags: [{ name: 'Management API (v1)' }, { name: 'Integration API (v2)' }],
    paths,
    components: {
      securitySchemes: {
        managementToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'A management token: opens the v1 API for one organization.',
        },
        connectorToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'A connector token: opens the v2 API for one system.',
        },
      },
      schemas: {
        V1Error: schemaOf(V1ErrorBody, 'output'),
        V2Error: schemaOf(V2ErrorBody, 'output'),
      },
    },
  };
}
