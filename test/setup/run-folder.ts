import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A folder that lives as long as this test run, for what test files make once and share (see `runOnce`). */
    runFolder: string;
  }
}

/**
 * Makes the folder in which the test files of one run share what is costly to make, such as the packed packages
 * (test/e2e/support/packages.ts), and removes it after the run. Nothing is made here: a run that needs none of it
 * pays nothing.
 */
export default function makeRunFolder(project: TestProject): () => void {
  const folder = mkdtempSync(join(tmpdir(), 'approval-connector-kit-tests-'));
  project.provide('runFolder', folder);
  return () => rmSync(folder, { recursive: true, force: true });
}
