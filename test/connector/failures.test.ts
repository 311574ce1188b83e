import { errors as undici } from 'undici';
import { describe, expect, it } from 'vitest';
import { NotFoundError, RateLimitedError, ServerError, UnauthorizedError } from '../../src/client/index.js';
import {
  AuthenticationError,
  CredentialsUnreadableError,
  classifyFailure,
  Secret,
  ServiceUnavailableError,
  StoppingError,
  SystemError,
  TaskDataInvalidError,
  TaskDeadlineError,
} from '../../src/connector/index.js';
import { REDACTED } from '../../src/connector/internal.js';
import { ValidationError } from '../../src/errors.js';

function withCode(code: string, message = `connect ${code} 10.0.0.7:443`): Error {
  return Object.assign(new Error(message), { code });
}

function httpError(status: number): Error {
  return Object.assign(new Error(`Request failed with status ${status}`), { status });
}

describe('the failure table, row by row', () => {
  it('row 1: the author rule decides first', () => {
    const ownRule = (error: unknown) => (error instanceof RangeError ? 'systemError' : undefined);
    expect(classifyFailure(new RangeError('quantity too large'), { classifyFailure: ownRule })).toEqual({
      status: 'systemError',
      meta: { code: 'RangeError', message: 'quantity too large' },
    });
    // The rule outranks the kit's own: a 401 the author knows to mean something else.
    expect(classifyFailure(httpError(401), { classifyFailure: () => 'systemError' }).status).toBe(
      'systemError',
    );
    // Returning undefined leaves the decision to the kit.
    expect(classifyFailure(httpError(401), { classifyFailure: () => undefined }).status).toBe(
      'authenticationError',
    );
  });

  it('row 1: a rule that throws or answers something else is ignored', () => {
    const throwing = () => {
      throw new Error('bug in the rule');
    };
    expect(classifyFailure(httpError(503), { classifyFailure: throwing }).status).toBe('serviceUnavailable');
    const invalid = () => 'failed' as never;
    expect(classifyFailure(httpError(503), { classifyFailure: invalid }).status).toBe('serviceUnavailable');
  });

  it('row 2: AuthenticationError -> authenticationError', () => {
    expect(classifyFailure(new AuthenticationError('SAP session expired'))).toEqual({
      status: 'authenticationError',
      meta: { code: 'authentication', message: 'SAP session expired' },
    });
  });

  it('row 3: ServiceUnavailableError -> serviceUnavailable', () => {
    expect(classifyFailure(new ServiceUnavailableError('SAP is in maintenance'))).toEqual({
      status: 'serviceUnavailable',
      meta: { code: 'service_unavailable', message: 'SAP is in maintenance' },
    });
  });

  it('row 4: SystemError -> systemError', () => {
    expect(classifyFailure(new SystemError('PO-1 is locked by another user'))).toEqual({
      status: 'systemError',
      meta: { code: 'system', message: 'PO-1 is locked by another user' },
    });
  });

  it('row 5: TaskDataInvalidError -> internalError', () => {
    const error = new TaskDataInvalidError('approve', [
      { path: ['approval', 'id'], message: 'Required', code: 'invalid_type' },
    ]);
    expect(classifyFailure(error)).toEqual({
      status: 'internalError',
      meta: {
        code: 'task_data_invalid',
        message: 'Invalid data for task type "approve": approval.id: Required',
      },
    });
  });

  it('row 6: CredentialsUnreadableError -> internalError', () => {
    expect(classifyFailure(new CredentialsUnreadableError('Credentials could not be decrypted'))).toEqual({
      status: 'internalError',
      meta: { code: 'credentials_unreadable', message: 'Credentials could not be decrypted' },
    });
  });

  it.each([401, 403])('row 7: HTTP %i -> authenticationError', (status) => {
    expect(classifyFailure(httpError(status))).toEqual({
      status: 'authenticationError',
      meta: { code: `HTTP_${status}`, message: `Request failed with status ${status}` },
    });
  });

  it.each([408, 429, 500, 502, 503, 504, 599])('row 8: HTTP %i -> serviceUnavailable', (status) => {
    expect(classifyFailure(httpError(status))).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: `HTTP_${status}` },
    });
  });

  it.each([400, 404, 409, 410, 422, 499])('row 9: HTTP %i -> systemError', (status) => {
    expect(classifyFailure(httpError(status))).toMatchObject({
      status: 'systemError',
      meta: { code: `HTTP_${status}` },
    });
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH'])(
    'row 10: connection failure %s -> serviceUnavailable',
    (code) => {
      expect(classifyFailure(withCode(code))).toEqual({
        status: 'serviceUnavailable',
        meta: { code, message: `connect ${code} 10.0.0.7:443` },
      });
    },
  );

  it('row 10: undici socket errors -> serviceUnavailable', () => {
    expect(classifyFailure(new undici.SocketError('other side closed'))).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'UND_ERR_SOCKET' },
    });
  });

  it("row 10: a closed undici client -> serviceUnavailable, as the kit's own clients count it a network error", () => {
    expect(classifyFailure(new undici.ClientClosedError())).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'UND_ERR_CLOSED' },
    });
  });

  it.each(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNABORTED'])(
    'row 11: timeout %s -> serviceUnavailable',
    (code) => {
      expect(classifyFailure(withCode(code))).toMatchObject({ status: 'serviceUnavailable', meta: { code } });
    },
  );

  it('row 11: undici timeouts -> serviceUnavailable', () => {
    for (const error of [
      new undici.ConnectTimeoutError(),
      new undici.HeadersTimeoutError(),
      new undici.BodyTimeoutError(),
    ]) {
      expect(classifyFailure(error)).toMatchObject({
        status: 'serviceUnavailable',
        meta: { code: error.code },
      });
    }
  });

  it('row 12: a TimeoutError, or an abort caused by one -> serviceUnavailable', () => {
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    expect(classifyFailure(timeout)).toEqual({
      status: 'serviceUnavailable',
      meta: { code: 'TimeoutError', message: 'The operation was aborted due to timeout' },
    });
    const aborted = Object.assign(new Error('This operation was aborted'), {
      name: 'AbortError',
      cause: timeout,
    });
    expect(classifyFailure(aborted)).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'TimeoutError' },
    });
  });

  it("row 12: the task's deadline, a TaskDeadlineError, or an abort caused by one -> serviceUnavailable", async () => {
    const deadline = new TaskDeadlineError(5_000);
    expect(classifyFailure(deadline)).toEqual({
      status: 'serviceUnavailable',
      meta: { code: 'TimeoutError', message: 'The task took longer than its deadline of 5000 ms' },
    });
    const aborted = Object.assign(new Error('This operation was aborted'), {
      name: 'AbortError',
      cause: deadline,
    });
    expect(classifyFailure(aborted)).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'TimeoutError' },
    });
    // One of a second copy of the kit, which instanceof does not know.
    const specifier = '../../src/connector/abort-reasons.ts?second-copy';
    const copy = (await import(
      /* @vite-ignore */ specifier
    )) as typeof import('../../src/connector/abort-reasons.js');
    expect(classifyFailure(new copy.TaskDeadlineError(5_000))).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'TimeoutError' },
    });
  });

  it("row 13: a StoppingError, the shutdown's abort, is not the source's fault -> internalError", () => {
    expect(classifyFailure(new StoppingError('The connector is shutting down'))).toEqual({
      status: 'internalError',
      meta: { code: 'stopping', message: 'The connector is shutting down' },
    });
  });

  it('row 13: anything else -> internalError', () => {
    expect(classifyFailure(new TypeError("Cannot read properties of undefined (reading 'id')"))).toEqual({
      status: 'internalError',
      meta: { code: 'TypeError', message: "Cannot read properties of undefined (reading 'id')" },
    });
    // An abort that is not a timeout (a shutdown) is not the source system's fault.
    expect(classifyFailure(new DOMException('This operation was aborted', 'AbortError')).status).toBe(
      'internalError',
    );
    expect(classifyFailure(new undici.RequestAbortedError()).status).toBe('internalError');
    // A kit error without an HTTP status, for example a request that failed validation before it was sent.
    expect(
      classifyFailure(
        new ValidationError('request', [{ path: ['id'], message: 'Required', code: 'invalid_type' }]),
      ),
    ).toMatchObject({
      status: 'internalError',
      meta: { code: 'validation' },
    });
    expect(classifyFailure(withCode('ERR_INVALID_ARG_TYPE', 'bad argument'))).toMatchObject({
      status: 'internalError',
      meta: { code: 'ERR_INVALID_ARG_TYPE' },
    });
  });

  it('row 13: values that are not errors -> internalError', () => {
    expect(classifyFailure('approval not found')).toEqual({
      status: 'internalError',
      meta: { code: 'nonErrorThrown', message: 'approval not found' },
    });
    expect(classifyFailure(undefined)).toEqual({
      status: 'internalError',
      meta: { code: 'nonErrorThrown', message: 'nonErrorThrown' },
    });
    expect(classifyFailure({ password: 'pw-9' })).toEqual({
      status: 'internalError',
      meta: { code: 'internalError', message: 'internalError' },
    });
  });
});

describe('where the HTTP status is found', () => {
  it.each([
    ['status', { status: 503 }],
    ['statusCode', { statusCode: 503 }],
    ['response.status (axios, ky, gaxios)', { response: { status: 503 } }],
    ['response.statusCode (got)', { response: { statusCode: 503 } }],
    ['$metadata.httpStatusCode (AWS SDK)', { $metadata: { httpStatusCode: 503 } }],
  ])('on %s', (_shape, fields) => {
    expect(classifyFailure(Object.assign(new Error('failed'), fields))).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'HTTP_503' },
    });
  });

  it("on undici's ResponseError", () => {
    const error = new undici.ResponseError('Response status code 401', 401, { headers: {}, body: null });
    expect(classifyFailure(error)).toMatchObject({
      status: 'authenticationError',
      meta: { code: 'HTTP_401' },
    });
  });

  it("on the kit's own client errors", () => {
    const target = { method: 'GET', path: '/v2/issues/PR-1' };
    expect(classifyFailure(new UnauthorizedError(target, 403, undefined)).status).toBe('authenticationError');
    expect(classifyFailure(new ServerError(target, 502, undefined)).status).toBe('serviceUnavailable');
    expect(classifyFailure(new NotFoundError(target, 404, undefined)).status).toBe('systemError');
  });

  it('ignores what is not an HTTP error status', () => {
    for (const status of [200, 302, 600, 503.5, '503', 'failure']) {
      expect(classifyFailure(Object.assign(new Error('x'), { status })).status).toBe('internalError');
    }
  });
});

describe('retryAfterMs: how long the failing system asked to wait', () => {
  const target = { method: 'GET', path: '/rest/api/3/search' };

  it("is read from a 429 or a 503 that carries one, as the kit's client and the examples' clients throw them", () => {
    const limited = Object.assign(httpError(429), { retryAfterMs: 3_000 });
    expect(classifyFailure(limited)).toMatchObject({ status: 'serviceUnavailable', retryAfterMs: 3_000 });
    expect(classifyFailure(new RateLimitedError(target, 429, undefined, 1_000)).retryAfterMs).toBe(1_000);
    expect(classifyFailure(new ServerError(target, 503, undefined, 0)).retryAfterMs).toBe(0);
  });

  it('is found along the cause chain, under a wrapper that decides the status', () => {
    const wrapped = new ServiceUnavailableError('Jira is throttling us', {
      cause: Object.assign(httpError(429), { retryAfterMs: 2_500 }),
    });
    expect(classifyFailure(wrapped)).toMatchObject({ status: 'serviceUnavailable', retryAfterMs: 2_500 });
  });

  it('is absent when nothing said how long, when the value is no wait, and when trying later cannot help', () => {
    expect(classifyFailure(httpError(503))).not.toHaveProperty('retryAfterMs');
    expect(classifyFailure(new ServerError(target, 502, undefined))).not.toHaveProperty('retryAfterMs');
    for (const retryAfterMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, '3000']) {
      expect(classifyFailure(Object.assign(httpError(429), { retryAfterMs }))).not.toHaveProperty(
        'retryAfterMs',
      );
    }
    // A 400 that says when to come back is still refused for what it is.
    const refused = classifyFailure(Object.assign(httpError(400), { retryAfterMs: 1_000 }));
    expect(refused).toEqual({
      status: 'systemError',
      meta: { code: 'HTTP_400', message: expect.any(String) },
    });
  });
});

describe('causes', () => {
  it('follows the cause chain: fetch failing to connect', () => {
    const refused = withCode('ECONNREFUSED');
    expect(classifyFailure(new TypeError('fetch failed', { cause: refused }))).toEqual({
      status: 'serviceUnavailable',
      meta: { code: 'ECONNREFUSED', message: 'fetch failed' },
    });
  });

  it("looks into an AggregateError's errors", () => {
    const error = new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed');
    expect(classifyFailure(error).status).toBe('serviceUnavailable');
  });

  it('lets the outermost decision win', () => {
    const error = new SystemError('PO-1 cannot be approved twice', { cause: httpError(503) });
    expect(classifyFailure(error).status).toBe('systemError');
    const wrapped = new Error('approve failed', { cause: new AuthenticationError('token revoked') });
    expect(classifyFailure(wrapped)).toEqual({
      status: 'authenticationError',
      meta: { code: 'authentication', message: 'approve failed' },
    });
  });

  it('survives cycles and getters that throw', () => {
    const cyclic = new Error('loop');
    cyclic.cause = cyclic;
    expect(classifyFailure(cyclic).status).toBe('internalError');

    const hostile = new Error('hostile');
    Object.defineProperty(hostile, 'status', {
      get() {
        throw new Error('no');
      },
    });
    expect(classifyFailure(hostile).status).toBe('internalError');
  });
});

describe('meta', () => {
  it('never carries a stack', () => {
    const { meta } = classifyFailure(new Error('boom'));
    expect(Object.keys(meta).sort()).toEqual(['code', 'message']);
    expect(JSON.stringify(meta)).not.toContain(' at ');
  });

  it('never carries a secret', () => {
    const password = new Secret('pw-very-secret');
    const error = Object.assign(
      new Error(
        `login as ada with pw-very-secret failed: POST https://ada:pw-url@sap.example.com ` +
          `{"authorization":"Bearer tok-abc.def"} token-plain-1`,
      ),
      { status: 401 },
    );
    const { meta } = classifyFailure(error, { secrets: [password, 'token-plain-1'] });
    for (const secret of ['pw-very-secret', 'pw-url', 'tok-abc.def', 'token-plain-1']) {
      expect(meta.message).not.toContain(secret);
    }
    expect(meta.message).toContain(REDACTED);
  });

  it('is bounded in length, scrubbed before it is cut', () => {
    const secret = 'S'.repeat(40);
    const long = `${'x'.repeat(480)}${secret}${'y'.repeat(1000)}`;
    const { meta } = classifyFailure(new Error(long), { secrets: [secret] });
    expect(meta.message).toHaveLength(500);
    expect(meta.message).not.toContain('SSSS');
    expect(meta.message.endsWith('…')).toBe(true);
  });

  it('uses the code when the message is empty, and a safe code only', () => {
    expect(classifyFailure(new SystemError('')).meta).toEqual({
      code: 'system',
      message: 'system',
    });
    const odd = Object.assign(new Error('x'), { code: 'has spaces and {json}', name: 'Error' });
    expect(classifyFailure(odd).meta.code).toBe('Error');
  });
});
