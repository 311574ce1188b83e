import type { Reporter, TestModule, Vitest } from 'vitest/node';

/**
 * Prints one plain closing line, `N passed, N failed` (with `, N skipped` when some were), after vitest's own
 * summary, so tools that read a run's last line know how it went. Before it, a run that left out the `processes`
 * project (`npm test`) says so, and which command runs it.
 */
export default class SummaryReporter implements Reporter {
  #processesLeftOut = false;

  onInit(vitest: Vitest): void {
    this.#processesLeftOut = !vitest.projects.some((project) => project.name === 'processes');
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const { state } = test.result();
        if (state === 'passed') count.passed += 1;
        else if (state === 'failed') count.failed += 1;
        else count.skipped += 1;
      }
    }
    if (this.#processesLeftOut) {
      process.stdout.write(
        '\nThe tests of processes and packed packages did not run here: `npm run test:processes` runs them.\n',
      );
    }
    const skipped = count.skipped > 0 ? `, ${count.skipped} skipped` : '';
    process.stdout.write(`\n${count.passed} passed, ${count.failed} failed${skipped}\n`);
  }
}
