import { build } from 'tsup';
import { consolePage } from '../../tsup.config.js';

// Each project of vitest.config.ts names this setup; the run builds the page once, whichever project asks first.
const BUILT = Symbol.for('approval-connector-kit.tests.consolePage');
const run = globalThis as { [BUILT]?: Promise<void> };

/**
 * Builds the console's page into `dist/console/` before the tests, with the package build's own configuration: the
 * backend serves it from there, also when it runs from its sources.
 */
export default function buildConsolePage(): Promise<void> {
  run[BUILT] ??= build({ ...consolePage, config: false, silent: true });
  return run[BUILT];
}
