import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium: `.ci/run` installs it (`apt-get install chromium`); Playwright's own download cannot work here. */
export const CHROMIUM = '/usr/bin/chromium';

// No sandbox (CI runs as root), no GPU, and nothing the browser would fetch on its own: no network but the backend.
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-quic',
  '--disable-sync',
];

/** A laptop's and a phone's viewport: every screenshot is taken at both. */
export const WIDTHS = {
  laptop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/** Screenshots land here, a git-ignored folder, as the test run's artifacts. */
export const ARTIFACTS = fileURLToPath(new URL('../../../../test-results/console/', import.meta.url));

/** Launches Chromium; each launch gets a fresh, temporary profile (`--user-data-dir`) from Playwright. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`The console's browser tests need Chromium at ${CHROMIUM}: apt-get install chromium`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/**
 * A new page in a context of its own (no cookie shared with another), that collects what the page reports as an
 * error: an uncaught exception, a console error, a failed request. A test checks that none came.
 */
export async function openPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: WIDTHS.laptop });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console error: ${message.text()}`);
  });
  return { page, errors };
}

/** Saves the page as it is now at both widths, as `<name>-laptop.png` and `<name>-phone.png`. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const [width, viewport] of Object.entries(WIDTHS)) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: `${ARTIFACTS}${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize(WIDTHS.laptop);
}
