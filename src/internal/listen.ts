import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Opens `server` on `port` and `host`, and resolves with its base URL on the port actually opened (also when `port`
 * is `0`), `http://127.0.0.1:9464` or `http://[::1]:9464`; rejects with the server's error (a port in use, say),
 * which the caller names.
 */
export function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve(`http://${shown}:${address.port}`);
    });
  });
}
