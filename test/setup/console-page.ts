import { build } from 'tsup';
import { consolePage } from '../../tsup.config.js';

/**
 * Builds the console's page into `dist/console/` before the tests, with the package build's own configuration: the
 * backend serves it from there, also when it runs from its sources.
 */
export default async function buildConsolePage(): Promise<void> {
  await build({ ...consolePage, config: false, silent: true });
}
