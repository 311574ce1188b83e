import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startReferenceBackend } from '../../src/backend/index.js';
import { call } from './helpers.js';

describe('startReferenceBackend', () => {
  it('listens on 127.0.0.1 and a free port by default, and closes idempotently', async () => {
    const backend = await startReferenceBackend();
    expect(backend.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await call(backend, 'GET', '/openapi.json')).status).toBe(200);
    await Promise.all([backend.close(), backend.close()]);
    await backend.close();
    await expect(call(backend, 'GET', '/openapi.json')).rejects.toThrow();
  });

  it('runs two backends side by side, each with its own data', async () => {
    const [a, b] = await Promise.all([startReferenceBackend(), startReferenceBackend()]);
    try {
      expect(a.url).not.toBe(b.url);
      const tenant = a.createTenant();
      expect((await call(b, 'GET', '/v1/systems', { token: tenant.managementToken })).status).toBe(401);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it.each([
    [{ port: -1 }, /`port`.*got `-1`/],
    [{ port: 1.5 }, /`port`/],
    [{ leaseMs: 0 }, /`leaseMs`.*got `0`/],
    [{ adminToken: 'short' }, /`adminToken`/],
  ])('names the option when %j is wrong', async (options, message) => {
    await expect(startReferenceBackend(options)).rejects.toThrow(message);
  });

  it('logs requests through the given logger without the authorization header', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino(
      {
        // Request lines are debug lines.
        level: 'debug',
        serializers: {
          req: (req: { headers: unknown; url: string }) => ({ url: req.url, headers: req.headers }),
        },
      },
      sink,
    );
    const backend = await startReferenceBackend({ logger });
    try {
      const tenant = backend.createTenant();
      await call(backend, 'GET', '/v1/systems', { token: tenant.managementToken });
      const log = lines.join('');
      expect(log).toContain('/v1/systems');
      expect(log).not.toContain(tenant.managementToken);
      expect(log).toContain('[Redacted]');
    } finally {
      await backend.close();
    }
  });
});
