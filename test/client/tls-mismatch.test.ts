import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { IntegrationClient, NetworkError, ProtocolMismatchError } from '../../src/client/index.js';

// A self-signed certificate for localhost and 127.0.0.1, for tests alone: the client is told what the server speaks,
// whatever its certificate.
const tls = {
  key: readFileSync(new URL('./fixtures/tls-key.pem', import.meta.url)),
  cert: readFileSync(new URL('./fixtures/tls-cert.pem', import.meta.url)),
};
const TOKEN = 'tls-mismatch-secret-token';
const servers: Server[] = [];
const clients: IntegrationClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve).closeAllConnections())),
  );
});

async function listening(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

// No state yet: the service's answer to Get connector state before any was put.
const answer = (_: unknown, response: import('node:http').ServerResponse) => {
  response.statusCode = 404;
  response.end(JSON.stringify({ status: 'failure' }));
};

function client(baseUrl: string): IntegrationClient {
  const made = new IntegrationClient({ baseUrl, token: TOKEN, retry: { retries: 2, baseDelayMs: 1 } });
  clients.push(made);
  return made;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('a TLS mismatch between the base URL and the server', () => {
  it('https to a plain-HTTP server: says it answered in plain HTTP and names the http URL, not a raw OpenSSL error', async () => {
    const port = await listening(createHttpServer(answer));
    let requests = 0;
    servers[0]!.on('connection', () => {
      requests += 1;
    });
    const error = await failure(client(`https://127.0.0.1:${port}/api`).getState());
    expect(error).toBeInstanceOf(ProtocolMismatchError);
    expect(error).toMatchObject({
      code: 'protocol_mismatch',
      serverSpeaks: 'http',
      url: `https://127.0.0.1:${port}/api/`,
      message: `https://127.0.0.1:${port}/api/ answered in plain HTTP, not TLS: use http://127.0.0.1:${port}/api/, or put the service behind TLS`,
    });
    // Not retried: the same URL gets the same answer.
    expect(requests).toBe(1);
    expect(String((error as Error).message)).not.toContain(TOKEN);
  });

  it('http to a TLS server: says it speaks TLS and names the https URL, instead of "other side closed"', async () => {
    const port = await listening(createHttpsServer(tls, answer));
    const error = await failure(client(`http://127.0.0.1:${port}`).getState());
    expect(error).toBeInstanceOf(ProtocolMismatchError);
    expect(error).toMatchObject({
      code: 'protocol_mismatch',
      serverSpeaks: 'https',
      message: `http://127.0.0.1:${port}/ speaks TLS, not plain HTTP: use https://127.0.0.1:${port}/`,
    });
  });

  it('keeps credentials in the URL out of the message', async () => {
    const port = await listening(createHttpServer(answer));
    const error = await failure(client(`https://user:hunter2@127.0.0.1:${port}/?key=k3y`).getState());
    expect(error).toBeInstanceOf(ProtocolMismatchError);
    expect((error as Error).message).not.toMatch(/hunter2|k3y|user/);
  });

  it('leaves a connection closed by a plain-HTTP server a NetworkError', async () => {
    const port = await listening(createHttpServer((request) => request.socket.destroy()));
    const error = await failure(client(`http://127.0.0.1:${port}`).getState());
    expect(error).toBeInstanceOf(NetworkError);
  });

  it('works as ever when the scheme matches, either way', async () => {
    const plain = await listening(createHttpServer(answer));
    await expect(client(`http://127.0.0.1:${plain}`).getState()).resolves.toBeNull();
    const secure = await listening(createHttpsServer(tls, answer));
    const trusting = new IntegrationClient({
      baseUrl: `https://localhost:${secure}`,
      token: TOKEN,
      dispatcher: new Agent({ connect: { ca: tls.cert } }),
    });
    clients.push(trusting);
    await expect(trusting.getState()).resolves.toBeNull();
  });
});
