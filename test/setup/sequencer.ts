import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that make the packed packages and their install, shared by every test file of a run
 * (test/e2e/support/packages.ts), and do little else: they start first, so that the packing runs beside the rest of
 * the suite.
 */
const MAKERS = ['test/e2e/installed-package.process.test.ts', 'test/e2e/create-connector.process.test.ts'];

/**
 * The files of generated projects: each spends most of its time in a copy of its template's project, and all of
 * them start from the shared install. They start last: begun first (as the longest files would be), they would only wait for
 * the packing while another file does it, a worker idle.
 */
const AFTER_THE_PACKING = ['test/e2e/templates/', 'test/e2e/older-node-project.process.test.ts'];

/**
 * The conformance battery's files: the kit's own (`test/conformance/`) and each example's `conformance.test.ts`. They
 * are the longest of `npm test`, each a few lines that run tens of checks, and vitest, with no timings of an earlier
 * run to go by (a fresh clone, CI), starts the largest files first: these would start last, and the run would end
 * waiting on them. They start first.
 */
const isBattery = (path: string) =>
  path.startsWith('test/conformance/') || path.endsWith('/conformance.test.ts');

/**
 * Vitest's order (the longest or largest files first), with the shared packages' makers and the battery's files
 * first, and the packages' users last.
 */
export default class PackagesFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const path = (file: TestSpecification) => relative(file.project.config.root, file.moduleId);
    const rank = (file: TestSpecification) => {
      if (MAKERS.includes(path(file))) return 0;
      if (isBattery(path(file))) return 1;
      return AFTER_THE_PACKING.some((start) => path(file).startsWith(start)) ? 3 : 2;
    };
    // Array.prototype.sort is stable: within a rank, vitest's own order stays.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
