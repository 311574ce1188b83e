/**
 * The checks of what the client is given: the instance's URL, a user name and a password (each also checks a
 * variable of the connector's configuration), a table name, a list of fields and a whole number option. Each
 * answers a {@link Checked} (the value, or a phrase that follows the setting's name), or throws a
 * {@link ServiceNowArgumentError} naming the option.
 * @module
 */
import { type Checked, ServiceNowArgumentError } from './errors.js';

/** ServiceNow's table names: lower-case letters, digits and underscores (scoped ones start with `x_`). */
const TABLE_NAME = /^[a-z][a-z0-9_]{0,79}$/;

/** A table name as the Table API takes it; throws otherwise. */
export function tableName(table: string): string {
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
    throw new ServiceNowArgumentError(
      `table must be a table name such as change_request, got ${JSON.stringify(table)}`,
    );
  }
  return table;
}

/** A list of field names, as `sysparm_fields` takes it; throws otherwise. */
export function fieldList(fields: readonly string[]): string {
  if (
    !Array.isArray(fields) ||
    fields.length === 0 ||
    !fields.every((field) => /^[a-z][\w.]*$/.test(field))
  ) {
    throw new ServiceNowArgumentError(
      `fields must be field names such as sys_id, got ${JSON.stringify(fields)}`,
    );
  }
  return fields.join(',');
}

/** A whole number option from `min`; throws otherwise. */
export function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new ServiceNowArgumentError(`${name} must be a whole number from ${min}, got ${String(value)}`);
  }
  return value;
}

/** Checks an instance URL: http(s), without credentials; its query and fragment are dropped. */
export function checkInstanceUrl(value: unknown): Checked<URL> {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    !['http:', 'https:'].includes(url.protocol) ||
    url.username !== '' ||
    url.password !== ''
  ) {
    return {
      ok: false,
      problem: `must be an http(s) URL without credentials, such as https://example.service-now.com, got ${
        typeof value === 'string'
          ? JSON.stringify(value.replace(/\/\/[^@/]*@/, '//[redacted]@'))
          : typeof value
      }`,
    };
  }
  url.search = '';
  url.hash = '';
  return { ok: true, value: url };
}

/** Checks a user name as basic authentication and an encoded query take it: no `:` and no `^`. */
export function checkUsername(value: unknown): Checked<string> {
  if (typeof value !== 'string' || value.trim() === '' || /[:^]/.test(value)) {
    return { ok: false, problem: 'must be a ServiceNow user name: a non-empty string without ":" or "^"' };
  }
  return { ok: true, value };
}

/** Checks a password; the problem never repeats its value. */
export function checkPassword(value: unknown): Checked<string> {
  if (typeof value !== 'string' || value === '') {
    return {
      ok: false,
      problem: `must be a non-empty string, got ${value === '' ? 'an empty string' : typeof value}`,
    };
  }
  return { ok: true, value };
}
