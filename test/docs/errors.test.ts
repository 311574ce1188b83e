import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as backend from '../../src/backend/index.js';
import * as client from '../../src/client/index.js';
import * as conformance from '../../src/conformance/index.js';
import * as connector from '../../src/connector/index.js';
import {
  ApprovalKitError,
  ERROR_CODES,
  type ErrorCode,
  PortInUseError,
  UnsupportedNodeError,
  ValidationError,
} from '../../src/errors.js';
import * as kit from '../../src/index.js';
import type { KitError } from '../../src/kit-error.js';
import * as testing from '../../src/testing/index.js';
import * as worker from '../../src/worker/index.js';

const catalogue = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = [...catalogue.matchAll(/^\| `([a-z_]+)` +\| `([A-Za-z]+)` +\|/gm)].map(([, code, name]) => ({
  code: code!,
  name: name!,
}));

/** The code a class's name gives: its name without `Error`, in snake_case (`PartialAddUsersError` → `partial_add_users`). */
function codeOfClassName(name: string): string {
  return name
    .replace(/Error$/, '')
    .replace(/(?<=[a-z0-9])([A-Z])/g, '_$1')
    .toLowerCase();
}

describe('docs/errors.md', () => {
  it('lists every code of the catalogue once, in its order', () => {
    expect(rows.map((row) => row.code)).toEqual([...ERROR_CODES]);
  });

  it('names for each code a class the kit exports, which is an ApprovalKitError named after itself', () => {
    const exported: Record<string, unknown> = {
      ...kit,
      ...client,
      ...worker,
      ...backend,
      ...testing,
      ...conformance,
    };
    for (const { code, name } of rows) {
      const found = exported[name];
      expect(typeof found, `${code}: ${name}`).toBe('function');
      expect((found as { prototype: unknown }).prototype, name).toBeInstanceOf(ApprovalKitError);
      expect((found as { name: string }).name).toBe(name);
    }
  });

  it('gives each class the code its name echoes: the name without `Error`, in snake_case', () => {
    expect(rows.length).toBe(ERROR_CODES.length);
    for (const { code, name } of rows) expect(code, name).toBe(codeOfClassName(name));
  });
});

describe('the rule of the codes', () => {
  it.each([
    ['SystemError', 'system'],
    ['ApiError', 'api'],
    ['PartialAddUsersError', 'partial_add_users'],
    ['OperationsServerListenError', 'operations_server_listen'],
    ['ServiceUnavailableError', 'service_unavailable'],
  ])('%s has the code %s', (name, code) => {
    expect(codeOfClassName(name)).toBe(code);
  });
});

const target = { method: 'GET', path: '/v2/connector/state' };
const url = new URL('http://127.0.0.1:9/');

/**
 * An error of each class, by the code it owns. The compiler holds the table to the catalogue: a code missing, or a
 * class made for a code it does not own, does not type-check.
 */
const made: { [Code in ErrorCode]: () => Extract<KitError, { code: Code }> } = {
  validation: () => new ValidationError('input', []),
  unsupported_node: () => new UnsupportedNodeError('too old'),
  port_in_use: () => new PortInUseError({ port: 9464, host: '127.0.0.1', setting: 'OPERATIONS_PORT' }),
  api: () => new client.ApiError('api', target, 418, undefined),
  bad_request: () => new client.BadRequestError(target, 400, undefined),
  unauthorized: () => new client.UnauthorizedError(target, 401, undefined),
  not_found: () => new client.NotFoundError(target, 404, undefined),
  conflict: () => new client.ConflictError(target, 409, undefined),
  payload_too_large: () => new client.PayloadTooLargeError(target, 413, undefined),
  rate_limited: () => new client.RateLimitedError(target, 429, undefined, undefined),
  server: () => new client.ServerError(target, 503, undefined),
  network: () => new client.NetworkError(target, 'ECONNREFUSED', true, null),
  timeout: () => new client.TimeoutError(target, 10),
  response_too_large: () => new client.ResponseTooLargeError(target, 200, 10),
  invalid_response: () => new client.InvalidResponseError(target, 200, []),
  paging_stalled: () => new client.PagingStalledError('Get users'),
  partial_add_users: () => new client.PartialAddUsersError([], [], [], null),
  client_closed: () => new client.ClientClosedError(),
  protocol_mismatch: () => new client.ProtocolMismatchError(url, 'http'),
  lifecycle: () => new worker.LifecycleError('start', 'stopped'),
  connector_token_rejected: () =>
    new worker.ConnectorTokenRejectedError(url, new client.UnauthorizedError(target, 401, undefined)),
  service_not_found: () =>
    new worker.ServiceNotFoundError(url, new client.NotFoundError(target, 404, undefined)),
  invalid_connector: () => new worker.InvalidConnectorError('no lookup()'),
  stopping: () => new worker.StoppingError(),
  task_deadline: () => new connector.TaskDeadlineError(30_000),
  shutdown_deadline: () => new worker.ShutdownDeadlineError(),
  authentication: () => new connector.AuthenticationError('signed out'),
  service_unavailable: () => new connector.ServiceUnavailableError('down'),
  system: () => new connector.SystemError('locked'),
  task_data_invalid: () => new connector.TaskDataInvalidError('approve', []),
  credentials_unreadable: () => new connector.CredentialsUnreadableError('sealed to another key'),
  key_ring_unavailable: () => new worker.KeyRingUnavailableError('no key'),
  key_ring_invalid: () => new worker.KeyRingInvalidError('keys.json', []),
  key_store_read_only: () => new worker.KeyStoreReadOnlyError('keys.json'),
  operations_server_closed: () => new worker.OperationsServerClosedError(),
  operations_server_listen: () => new worker.OperationsServerListenError('127.0.0.1', 9464, { cause: null }),
  service: () => new backend.ServiceError('Not Found', 'no such approval'),
  harness_timeout: () => new testing.HarnessTimeoutError('no result', 10),
  conformance_failure: () => new conformance.ConformanceFailure('a cursor', 'none'),
};

describe('every class of the catalogue', () => {
  it.each(ERROR_CODES.map((code) => [code]))('throws %s, the code its name echoes', (code) => {
    const error = made[code]();
    expect(error.code).toBe(code);
    expect(error.name).toBe(error.constructor.name);
    expect(codeOfClassName(error.constructor.name)).toBe(code);
    expect(rows.find((row) => row.code === code)?.name).toBe(error.constructor.name);
  });
});
