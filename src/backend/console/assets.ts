import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { ServiceError } from '../errors.js';

/** The page's built files, by the name they are served under. */
const FILES = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;
export type AssetName = keyof typeof FILES;

/** Everything the page loads comes from here: no inline script or style, no other origin, no frames. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Console · reference backend</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/app.css">
<script src="/console/app.js" defer></script>
</head>
<body>
<noscript>The console needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;

/**
 * Where the build puts the page (`npm run build`, see tsup.config.ts): `dist/console/` of the package, found from
 * this module's own file, which is in `src/` when the kit runs from its sources and in `dist/` once built.
 */
export function pageDirectory(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist', 'console');
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Serves the page's HTML and its two files, read once; a 503 that says how to build them when they are missing. */
export class PageAssets {
  readonly #files = new Map<AssetName, Buffer>();

  constructor(private readonly directory: string | undefined = pageDirectory()) {}

  sendHtml(reply: FastifyReply): FastifyReply {
    // Checked here, so that a missing build is said plainly on the page's own address.
    this.#read('app.js');
    return secure(reply)
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .type('text/html; charset=utf-8')
      .send(HTML);
  }

  send(reply: FastifyReply, name: AssetName): FastifyReply {
    const file = this.#read(name);
    return secure(reply).type(FILES[name]).send(file);
  }

  #read(name: AssetName): Buffer {
    let file = this.#files.get(name);
    if (file === undefined) {
      const path = this.directory === undefined ? undefined : join(this.directory, name);
      if (path === undefined || !existsSync(path)) {
        throw new ServiceError(
          'Internal Server Error',
          'the console page is not built: run `npm run build` in the kit',
          { status: 503 },
        );
      }
      file = readFileSync(path);
      this.#files.set(name, file);
    }
    return file;
  }
}

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}
