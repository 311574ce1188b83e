import { onTestFinished } from 'vitest';
import { createTestHarness, type TestHarness, type TestHarnessOptions } from '../../../src/testing/index.js';
import { MemorySource } from './memory-source.js';

/** When the tests' source records were last modified, unless a test says otherwise: 2026-05-01 10:00 UTC. */
export const T0 = Date.UTC(2026, 4, 1, 10, 0, 0);

/** The time `seconds` after {@link T0}, as a source gives a `lastModified`. */
export const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

/** Options of {@link openHarness}: those of the harness, and what the source holds from the start. */
export interface OpenHarnessOptions extends TestHarnessOptions {
  /** The ids of the approvals the source holds from the start, each last modified at {@link T0}. */
  approvals?: readonly string[];
}

/** What each end-to-end test of the runtime starts from. */
export interface OpenedHarness {
  /** A fresh harness: the reference backend in-process, a tenant on it, the workers it starts. */
  harness: TestHarness;
  /** A fresh source system in memory, for the test's connectors to read. */
  source: MemorySource;
}

/**
 * The harness and the source one test runs against, the harness (and every worker it started) closed when the test
 * finishes, whether it passed or not. Called from a file's `beforeEach`, so that each file says only what is its
 * own:
 *
 * ```ts
 * let harness: TestHarness;
 * let source: MemorySource;
 * beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1'] })));
 * ```
 */
export async function openHarness({
  approvals = [],
  ...options
}: OpenHarnessOptions = {}): Promise<OpenedHarness> {
  const harness = await createTestHarness(options);
  onTestFinished(() => harness.close());
  const source = new MemorySource();
  for (const id of approvals) source.put(id, at(0));
  return { harness, source };
}
