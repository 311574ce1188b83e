import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

/** Where the browser tests' Chromium came from, and how to launch it. */
export interface ChromiumFound {
  executablePath: string;
  args: string[];
  /** Which rule found it, for the message of a failed launch. */
  source: 'CHROMIUM_PATH' | 'playwright' | 'system' | '@sparticuz/chromium';
}

// No sandbox (tests may run as root), no GPU, and nothing the browser would fetch on its own: no network but the
// backend under test.
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-quic',
  '--disable-sync',
];

const SYSTEM_BROWSERS: Partial<Record<NodeJS.Platform, string[]>> = {
  linux: [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
  ],
  darwin: [
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    '/Applications/Chromium.app/Contents/MacOS/Chromium',
  ],
  win32: [
    'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
    'C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe',
  ],
};

/**
 * Finds a Chromium for the browser tests, in this order: `CHROMIUM_PATH`; a browser Playwright installed
 * (`npx playwright install chromium`); a system Chromium or Google Chrome; on Linux, the Chromium that the
 * `@sparticuz/chromium` devDependency ships inside its npm package, so that `npm ci && npm test` needs nothing else.
 */
export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<ChromiumFound> {
  const explicit = env.CHROMIUM_PATH;
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`CHROMIUM_PATH names ${explicit}, which does not exist`);
    return { executablePath: explicit, args: ARGS, source: 'CHROMIUM_PATH' };
  }
  const installed = playwrightBrowser();
  if (installed) return { executablePath: installed, args: ARGS, source: 'playwright' };
  const system = (SYSTEM_BROWSERS[process.platform] ?? []).find((path) => existsSync(path));
  if (system) return { executablePath: system, args: ARGS, source: 'system' };
  if (process.platform === 'linux') {
    const { default: packaged } = await import('@sparticuz/chromium');
    packaged.setGraphicsMode = false;
    const executablePath = await packaged.executablePath();
    // Its own flags are what its headless-shell build needs, but for `--single-process`, made for serverless
    // sandboxes: in one process, closing a browser context takes the whole browser down.
    const args = packaged.args.filter((arg) => arg !== '--single-process');
    return { executablePath, args: [...args, ...ARGS], source: '@sparticuz/chromium' };
  }
  throw new Error(
    'The browser tests need Chromium or Google Chrome: install one, run `npx playwright install chromium`, or set CHROMIUM_PATH',
  );
}

function playwrightBrowser(): string | undefined {
  try {
    const path = chromium.executablePath();
    return existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}
