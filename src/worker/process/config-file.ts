/**
 * The worker's config file (`CONNECTOR_CONFIG`): read as a JSON object of connector options, or a problem that
 * names the file and, for bad JSON, only where (never the text around it, which may hold the token).
 * @module
 */
import { readFileSync } from 'node:fs';
import type { ValidationIssue } from '../../errors.js';

/** The config file's options, or `{}` with the problem added to `issues` when it cannot be read as a JSON object. */
export function readConfigFile(path: string, issues: ValidationIssue[]): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    issues.push({
      code: 'custom',
      path: ['CONNECTOR_CONFIG'],
      message: `Cannot read the config file ${path} (\`CONNECTOR_CONFIG\`): ${code}`,
    });
    return {};
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Only where: a parser's message quotes the text around it, which may hold the token.
    const where = /position \d+(?: \(line \d+ column \d+\))?/.exec((error as Error).message)?.[0];
    issues.push({
      code: 'custom',
      path: ['CONNECTOR_CONFIG'],
      message: `The config file ${path} (\`CONNECTOR_CONFIG\`) is not valid JSON${where ? ` (at ${where})` : ''}`,
    });
    return {};
  }
  if (!isObject(value)) {
    issues.push({
      code: 'custom',
      path: ['CONNECTOR_CONFIG'],
      message: `The config file ${path} (\`CONNECTOR_CONFIG\`) holds ${Array.isArray(value) ? 'an array' : `\`${String(value)}\``}, not a JSON object of options`,
    });
    return {};
  }
  return value;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
