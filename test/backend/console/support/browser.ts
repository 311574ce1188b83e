import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { inject } from 'vitest';

/** A laptop's and a phone's viewport: every screenshot is taken at both. */
export const WIDTHS = {
  laptop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/** Screenshots land here, a git-ignored folder, as the test run's artifacts. */
export const ARTIFACTS = fileURLToPath(new URL('../../../../test-results/console/', import.meta.url));

/**
 * Launches the Chromium that `test/setup/browser.ts` found (see `findChromium` for the order); each launch gets a
 * fresh, temporary profile (`--user-data-dir`) from Playwright.
 */
export async function launchBrowser(): Promise<Browser> {
  const found = inject('chromium');
  if ('error' in found) throw new Error(found.error);
  return chromium.launch({ executablePath: found.executablePath, args: found.args });
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

/**
 * Whether the tests save the screenshots they name along the way: `CONSOLE_SCREENSHOTS=1`. Saving them costs a
 * quarter of the browser test's time, for a reader of the page's looks; a failing test saves its pages either way.
 */
export const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

/**
 * Saves the page as it is now at both widths, as `<name>-laptop.png` and `<name>-phone.png`, when
 * {@link SCREENSHOTS} asks for them, or when `always`.
 */
export async function screenshots(page: Page, name: string, always = false): Promise<void> {
  if (!SCREENSHOTS && !always) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const [width, viewport] of Object.entries(WIDTHS)) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: `${ARTIFACTS}${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize(WIDTHS.laptop);
}
