import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  IntegrationClient,
  ResponseTooLargeError,
} from '../../src/client/index.js';
import { ValidationError } from '../../src/index.js';
import { type Reply, ScriptedServer } from './support/scripted-server.js';

const LIMIT = 64 * 1024;
// What an endless answer writes at most, so that a client without a limit fails the test instead of the machine.
const BOUND = 64 * 1024 * 1024;

let server: ScriptedServer;
let client: IntegrationClient;

beforeAll(async () => {
  server = await ScriptedServer.start();
  // Retries on, to show that a refused answer is not asked for again; a timeout well past what the tests need.
  client = new IntegrationClient({
    baseUrl: server.url,
    token: 't',
    maxResponseBytes: LIMIT,
    timeoutMs: 10_000,
    retry: { retries: 2, random: () => 0 },
  });
});
afterEach(() => {
  server.reset();
});
afterAll(async () => {
  await client.destroy();
  await server.close();
});

/** What an answer written by the test saw of its connection. */
interface Written {
  bytes: number;
  closed: boolean;
}

/**
 * An answer whose body does not end, written as fast as the client reads it: with `chunked` framing (no
 * `Content-Length`), or delimited by the connection's close (no length, no chunks).
 */
function endlessAnswer(framing: 'chunked' | 'close-delimited'): { reply: Reply; written: Written } {
  const written: Written = { bytes: 0, closed: false };
  const chunk = Buffer.alloc(16 * 1024, 0x20);
  const reply: Reply = {
    respond: (response) => {
      const socket = response.socket as Socket;
      socket.on('close', () => {
        written.closed = true;
      });
      if (framing === 'chunked') response.writeHead(200, { 'content-type': 'application/json' });
      else socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n');
      const sink = framing === 'chunked' ? response : socket;
      const pump = () => {
        while (!written.closed && written.bytes < BOUND) {
          written.bytes += chunk.length;
          if (!sink.write(chunk)) {
            sink.once('drain', pump);
            return;
          }
        }
      };
      pump();
    },
  };
  return { reply, written };
}

/** A Get UI templates answer of exactly `size` bytes of JSON. */
function answerOfSize(size: number): string {
  const empty = JSON.stringify({ status: 'success', data: { uiTemplates: [] }, pad: '' });
  return JSON.stringify({
    status: 'success',
    data: { uiTemplates: [] },
    pad: 'x'.repeat(size - empty.length),
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail, but it succeeded');
    },
    (error: unknown) => error,
  );
}

describe('the largest answer the client reads', () => {
  it('reads an answer of exactly maxResponseBytes, and refuses one byte more', async () => {
    const exact = answerOfSize(LIMIT);
    expect(Buffer.byteLength(exact)).toBe(LIMIT);
    server.reply({ text: exact }, { text: answerOfSize(LIMIT + 1) });
    await expect(client.getUiTemplates()).resolves.toEqual([]);
    const error = await rejection(client.getUiTemplates());
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({
      code: 'response_too_large',
      method: 'GET',
      path: '/v2/connector/ui-templates',
      status: 200,
      limitBytes: LIMIT,
    });
    expect(server.requests).toHaveLength(2);
  });

  it('refuses an answer whose Content-Length passes the limit at once, without waiting for its body', async () => {
    const written: Written = { bytes: 0, closed: false };
    server.reply({
      respond: (response) => {
        response.socket?.on('close', () => {
          written.closed = true;
        });
        // The body never comes: a client that waited for it would time out instead.
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) });
        response.flushHeaders();
      },
    });
    const error = await rejection(client.getUiTemplates());
    expect(error).toMatchObject({ code: 'response_too_large', status: 200, limitBytes: LIMIT });
    await vi.waitFor(() => expect(written.closed).toBe(true));
    expect(server.requests).toHaveLength(1);
  });

  it.each(['chunked', 'close-delimited'] as const)(
    'aborts an endless %s answer without Content-Length once it passes the limit',
    async (framing) => {
      const { reply, written } = endlessAnswer(framing);
      server.reply(reply);
      const error = await rejection(client.getUiTemplates());
      expect(error).toBeInstanceOf(ResponseTooLargeError);
      expect(error).toMatchObject({ code: 'response_too_large', limitBytes: LIMIT });
      // The client closed the connection: the server stopped long before its bound.
      await vi.waitFor(() => expect(written.closed).toBe(true));
      expect(written.bytes).toBeLessThan(BOUND);
      expect(server.requests).toHaveLength(1);
    },
  );

  it('bounds an error answer too, and does not retry it as a 5xx', async () => {
    server.reply({ status: 503, text: ' '.repeat(LIMIT + 1) });
    const error = await rejection(client.getUiTemplates());
    expect(error).toMatchObject({ code: 'response_too_large', status: 503 });
    expect(server.requests).toHaveLength(1);
  });

  it('defaults to 32 MiB, and refuses a limit that is not a positive integer, naming it', () => {
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(32 * 1024 * 1024);
    for (const maxResponseBytes of [0, -1, 1.5]) {
      const error = (() => {
        try {
          return new IntegrationClient({ baseUrl: server.url, token: 't', maxResponseBytes });
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues[0]?.path).toEqual(['maxResponseBytes']);
    }
  });
});
