import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  BadRequestError,
  ConflictError,
  IntegrationClient,
  ManagementClient,
  NetworkError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from '../../src/client/index.js';
import { parseRetryAfter, type RetryPolicy, withRetry } from '../../src/client/retry.js';
import { ScriptedServer } from './support/scripted-server.js';

const target = { method: 'GET', path: '/v2/connector/state' };
const policy = (overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({
  retries: 4,
  baseDelayMs: 100,
  maxDelayMs: 1000,
  maxRetryTimeMs: 60_000,
  random: () => 0.5,
  ...overrides,
});
const serverError = () => new ServerError(target, 503, { status: 'failure' });

describe('Retry-After', () => {
  it('reads Retry-After in seconds or as an HTTP date', () => {
    const now = Date.UTC(2026, 4, 1, 10, 0, 0);
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(new Date(now + 5000).toUTCString(), now)).toBe(5000);
    expect(parseRetryAfter(new Date(now - 5000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('withRetry (fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('retries 5xx after each backoff and resolves with the first success', async () => {
    vi.useFakeTimers();
    const attempt = vi
      .fn<() => Promise<string>>()
      .mockRejectedValueOnce(serverError())
      .mockRejectedValueOnce(serverError())
      .mockResolvedValue('ok');
    const result = withRetry(attempt, policy(), 'safe', undefined);
    await vi.advanceTimersByTimeAsync(0);
    expect(attempt).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(49); // first wait: 0.5 * 100 = 50
    expect(attempt).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempt).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(100); // second wait: 0.5 * 200
    expect(attempt).toHaveBeenCalledTimes(3);
    await expect(result).resolves.toBe('ok');
  });

  it('honours Retry-After instead of the backoff, even beyond maxDelay', async () => {
    vi.useFakeTimers();
    const attempt = vi
      .fn<() => Promise<string>>()
      .mockRejectedValueOnce(new RateLimitedError(target, 429, undefined, 5000))
      .mockResolvedValue('ok');
    const result = withRetry(attempt, policy(), 'safe', undefined);
    await vi.advanceTimersByTimeAsync(4999);
    expect(attempt).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toBe('ok');
    expect(attempt).toHaveBeenCalledTimes(2);
  });

  it('reports each retry before its wait, with the wait and the reason, and not the failure that ends the call', async () => {
    vi.useFakeTimers();
    const errors = [
      serverError(),
      new RateLimitedError(target, 429, undefined, 5000),
      new NetworkError(target, 'ECONNRESET', false, null),
      new TimeoutError(target, 10),
      serverError(),
    ];
    let calls = 0;
    const attempt = vi.fn<() => Promise<string>>(() => Promise.reject(errors[calls++]));
    const onRetry = vi.fn();
    const settled = withRetry(attempt, policy(), 'safe', undefined, onRetry).catch(
      (caught: unknown) => caught,
    );
    await vi.advanceTimersByTimeAsync(0);
    // Told before the wait: the second attempt has not been made yet.
    expect(onRetry).toHaveBeenCalledTimes(1);
    expect(attempt).toHaveBeenCalledTimes(1);
    await vi.runAllTimersAsync();
    expect(await settled).toBe(errors[4]);
    expect(onRetry.mock.calls.map(([retry]) => retry)).toEqual([
      { attempt: 1, delayMs: 50, reason: 'server_error', error: errors[0] },
      { attempt: 2, delayMs: 5000, reason: 'rate_limited', error: errors[1] },
      { attempt: 3, delayMs: 200, reason: 'network', error: errors[2] },
      { attempt: 4, delayMs: 400, reason: 'timeout', error: errors[3] },
    ]);
  });

  it('reports no retry for a failure it does not retry, or a wait past the budget', async () => {
    const onRetry = vi.fn();
    const badRequest = new BadRequestError(target, 400, undefined);
    await expect(
      withRetry(() => Promise.reject(badRequest), policy(), 'safe', undefined, onRetry),
    ).rejects.toBe(badRequest);
    const tooLong = new RateLimitedError(target, 429, undefined, 10_000);
    await expect(
      withRetry(() => Promise.reject(tooLong), policy({ maxRetryTimeMs: 5000 }), 'safe', undefined, onRetry),
    ).rejects.toBe(tooLong);
    expect(onRetry).not.toHaveBeenCalled();
  });

  it('gives up with the last error once the retries are spent', async () => {
    vi.useFakeTimers();
    const errors = [serverError(), serverError(), serverError()];
    let calls = 0;
    const attempt = vi.fn<() => Promise<string>>(() => Promise.reject(errors[calls++]));
    const result = withRetry(attempt, policy({ retries: 2 }), 'safe', undefined);
    const settled = result.catch((error: unknown) => error);
    await vi.runAllTimersAsync();
    expect(await settled).toBe(errors[2]);
    expect(attempt).toHaveBeenCalledTimes(3);
  });

  it('gives up at once when the next wait would pass the time budget', async () => {
    vi.useFakeTimers();
    const error = new RateLimitedError(target, 429, undefined, 10_000);
    const attempt = vi.fn<() => Promise<string>>().mockRejectedValue(error);
    await expect(withRetry(attempt, policy({ maxRetryTimeMs: 5000 }), 'safe', undefined)).rejects.toBe(error);
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('keeps its time budget when the wall clock steps a day forward after the first failure', async () => {
    // The monotonic clock follows the fake timers; the wall clock is stepped apart from it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    const attempt = vi.fn<() => Promise<string>>(async () => {
      if (attempt.mock.calls.length === 1) vi.setSystemTime(Date.now() + 24 * 60 * 60 * 1000);
      throw serverError();
    });
    const settled = withRetry(attempt, policy({ retries: 6 }), 'safe', undefined).catch(
      (caught: unknown) => caught,
    );
    await vi.runAllTimersAsync();
    expect(await settled).toBeInstanceOf(ServerError);
    expect(attempt).toHaveBeenCalledTimes(7);
  });

  it('gives up once the monotonic time spent and the next wait would pass the time budget', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    // Waits of 50, 100, 200, 400, 500 ms (random 0.5, base 100, max 1000): a budget of 700 ms holds three of them.
    const attempt = vi.fn<() => Promise<string>>().mockRejectedValue(serverError());
    const settled = withRetry(attempt, policy({ retries: 6, maxRetryTimeMs: 700 }), 'safe', undefined).catch(
      (caught: unknown) => caught,
    );
    await vi.runAllTimersAsync();
    expect(await settled).toBeInstanceOf(ServerError);
    expect(attempt).toHaveBeenCalledTimes(4);
  });

  it('names the reason of a 5xx server_error and of a 408 http_error: a metric label, which keeps its names', async () => {
    vi.useFakeTimers();
    const errors = [serverError(), new ApiError('api', target, 408, undefined)];
    let calls = 0;
    const onRetry = vi.fn();
    const settled = withRetry(
      () => (calls < errors.length ? Promise.reject(errors[calls++]) : Promise.resolve('done')),
      policy(),
      'safe',
      undefined,
      onRetry,
    );
    await vi.runAllTimersAsync();
    expect(await settled).toBe('done');
    expect(onRetry.mock.calls.map(([retry]) => [retry.reason, retry.error.code])).toEqual([
      ['server_error', 'server'],
      ['http_error', 'api'],
    ]);
  });

  it.each([
    { what: 'a 400', error: new BadRequestError(target, 400, undefined), repeatability: 'safe', attempts: 1 },
    { what: 'a 409', error: new ConflictError(target, 409, undefined), repeatability: 'safe', attempts: 1 },
    {
      what: 'a 409 of a request that is not safe to repeat',
      error: new ConflictError(target, 409, undefined),
      repeatability: 'unsent',
      attempts: 1,
    },
    { what: 'a 431', error: new ApiError('api', target, 431, undefined), repeatability: 'safe', attempts: 1 },
    { what: 'a 408', error: new ApiError('api', target, 408, undefined), repeatability: 'safe', attempts: 3 },
    { what: 'a 425', error: new ApiError('api', target, 425, undefined), repeatability: 'safe', attempts: 3 },
    {
      what: 'a 408 of a request that is not safe to repeat',
      error: new ApiError('api', target, 408, undefined),
      repeatability: 'unsent',
      attempts: 1,
    },
    {
      what: 'a 500 of a request that is not safe to repeat',
      error: serverError(),
      repeatability: 'unsent',
      attempts: 1,
    },
    {
      what: 'a reset connection of a request that is not safe to repeat',
      error: new NetworkError(target, 'ECONNRESET', false, null),
      repeatability: 'unsent',
      attempts: 1,
    },
    {
      what: 'a refused connection of a request that is not safe to repeat',
      error: new NetworkError(target, 'ECONNREFUSED', true, null),
      repeatability: 'unsent',
      attempts: 3,
    },
    { what: 'a timeout', error: new TimeoutError(target, 10), repeatability: 'safe', attempts: 3 },
    {
      what: 'a reset connection',
      error: new NetworkError(target, 'ECONNRESET', false, null),
      repeatability: 'safe',
      attempts: 3,
    },
  ] as const)('after $what makes $attempts attempt(s) in all', async ({ error, repeatability, attempts }) => {
    vi.useFakeTimers();
    const attempt = vi.fn<() => Promise<string>>().mockRejectedValue(error);
    const settled = withRetry(attempt, policy({ retries: 2 }), repeatability, undefined).catch(
      (caught: unknown) => caught,
    );
    await vi.runAllTimersAsync();
    expect(await settled).toBe(error);
    expect(attempt).toHaveBeenCalledTimes(attempts);
  });

  it('stops waiting as soon as the signal aborts, rejecting with its reason', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const attempt = vi.fn<() => Promise<string>>().mockRejectedValue(serverError());
    const settled = withRetry(attempt, policy(), 'safe', controller.signal).catch(
      (caught: unknown) => caught,
    );
    await vi.advanceTimersByTimeAsync(10);
    const reason = new Error('shutting down');
    controller.abort(reason);
    expect(await settled).toBe(reason);
    await vi.runAllTimersAsync();
    expect(attempt).toHaveBeenCalledTimes(1);
  });
});

describe('retries over HTTP', () => {
  let server: ScriptedServer;
  const fast = { retries: 3, random: () => 0 };

  beforeAll(async () => {
    server = await ScriptedServer.start();
  });
  afterEach(() => {
    server.requests.length = 0;
  });
  afterAll(() => server.close());

  it('repeats a safe request through 503, 429 and a dropped connection until it succeeds', async () => {
    const client = new IntegrationClient({ baseUrl: server.url, token: 't', retry: fast });
    server.reply(
      { status: 503, json: { status: 'failure' } },
      { status: 429, json: { status: 'failure' } },
      'drop',
      {
        json: { status: 'success' },
      },
    );
    await client.putState({ a: 1 });
    expect(server.requests).toHaveLength(4);
    expect(new Set(server.requests.map((r) => r.body))).toEqual(new Set(['{"state":{"a":1}}']));
    await client.close();
  });

  it('does not repeat a request the service answers 409, in either API’s shape', async () => {
    const integration = new IntegrationClient({ baseUrl: server.url, token: 't', retry: fast });
    // Were it repeated, the next answer would be the server's default, a success.
    server.reply({ status: 409, json: { status: 'failure' } });
    await expect(integration.putState({ a: 1 })).rejects.toBeInstanceOf(ConflictError);
    expect(server.requests).toHaveLength(1);
    await integration.close();
    const management = new ManagementClient({ baseUrl: server.url, token: 't', retry: fast });
    server.reply({ status: 409, json: { Error: 'Conflict. the users changed' } });
    await expect(management.deleteUsers(['11111111-1111-4111-8111-111111111111'])).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(server.requests).toHaveLength(2);
    await management.close();
  });

  it('keeps the call’s outcome when onRetry throws or rejects', async () => {
    const heard: number[] = [];
    const client = new IntegrationClient({
      baseUrl: server.url,
      token: 't',
      retry: fast,
      onRetry: (event) => {
        heard.push(event.attempt);
        if (event.attempt === 1) throw new Error('observer broke');
        return Promise.reject(new Error('observer rejected'));
      },
    });
    server.reply({ status: 503, json: { status: 'failure' } }, 'drop', { json: { status: 'success' } });
    await expect(client.putState({ a: 1 })).resolves.toBeUndefined();
    expect(heard).toEqual([1, 2]);
    expect(server.requests).toHaveLength(3);
    await client.close();
  });

  it('does not repeat Add users once the request may have reached the server', async () => {
    const client = new ManagementClient({ baseUrl: server.url, token: 't', retry: fast });
    server.reply({ status: 500, json: { Error: 'Internal Server Error. boom' } });
    await expect(
      client.addUsers('11111111-1111-4111-8111-111111111111', [
        { email: 'a@b.c', firstName: 'A', lastName: 'B' },
      ]),
    ).rejects.toMatchObject({ code: 'server' });
    server.reply('drop');
    await expect(
      client.addUsers('11111111-1111-4111-8111-111111111111', [
        { email: 'a@b.c', firstName: 'A', lastName: 'B' },
      ]),
    ).rejects.toMatchObject({ code: 'network', unsent: false });
    expect(server.requests).toHaveLength(2);
    await client.close();
  });

  it('repeats Add users when the connection was refused, so nothing was sent', async () => {
    const closed = await ScriptedServer.start();
    const url = closed.url;
    await closed.close();
    const client = new ManagementClient({ baseUrl: url, token: 't', retry: { retries: 2, random: () => 0 } });
    const error = await client
      .addUsers('11111111-1111-4111-8111-111111111111', [{ email: 'a@b.c', firstName: 'A', lastName: 'B' }])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ reason: 'ECONNREFUSED', unsent: true });
    await client.close();
  });

  it('times out an attempt that gets no answer, and retries it', async () => {
    const client = new IntegrationClient({
      baseUrl: server.url,
      token: 't',
      timeoutMs: 50,
      retry: { retries: 1, random: () => 0 },
    });
    server.reply('hang', 'hang');
    const error = await client.getState().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'timeout', timeoutMs: 50 });
    expect(server.requests).toHaveLength(2);
    await client.destroy();
  });

  it('aborts a request in flight with the signal’s reason and sends no retry', async () => {
    const client = new IntegrationClient({ baseUrl: server.url, token: 't', retry: fast });
    server.reply('hang');
    const controller = new AbortController();
    const pending = client.getTask({ signal: controller.signal }).catch((caught: unknown) => caught);
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await pending).toBe(reason);
    expect(server.requests).toHaveLength(1);
    await expect(client.getTask({ signal: controller.signal })).rejects.toBe(reason);
    expect(server.requests).toHaveLength(1);
    await client.destroy();
  });
});
