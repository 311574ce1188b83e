import type { TestProject } from 'vitest/node';
import { type ChromiumFound, findChromium } from './chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Chromium the browser tests launch, or why none was found. */
    chromium: ChromiumFound | { error: string };
  }
}

/**
 * Finds the browsers tests' Chromium once, before any test file runs: unpacking the packaged one is not safe to race
 * from several test files at once.
 */
export default async function findBrowser(project: TestProject): Promise<void> {
  try {
    project.provide('chromium', await findChromium());
  } catch (error) {
    project.provide('chromium', { error: error instanceof Error ? error.message : String(error) });
  }
}
