import { afterEach, beforeEach } from 'vitest';

// Stray console output hides real failures and leaks data: any call to console fails the test that made it.
const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
let calls: string[] = [];

beforeEach(() => {
  calls = [];
  for (const method of methods) {
    console[method] = (...args: unknown[]) => {
      calls.push(`console.${method}: ${args.map(String).join(' ')}`);
    };
  }
});

afterEach(() => {
  if (calls.length > 0) {
    const seen = calls;
    calls = [];
    throw new Error(`Unexpected console output:\n${seen.join('\n')}`);
  }
});
