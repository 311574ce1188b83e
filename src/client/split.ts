import { ValidationError } from '../errors.js';

/**
 * Splits a list into consecutive chunks whose JSON array, as sent, is at most `limitBytes` bytes (UTF-8).
 * Everything is measured before anything is sent: an item too large for a request on its own is a
 * {@link ValidationError} naming its index.
 */
export function splitByBytes<T>(items: readonly T[], limitBytes: number, subject: string): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let size = 2; // the brackets of the array
  items.forEach((item, index) => {
    const bytes = Buffer.byteLength(JSON.stringify(item));
    if (2 + bytes > limitBytes) {
      throw new ValidationError(subject, [
        {
          path: [index],
          message: `is ${bytes} bytes of JSON; one request carries at most ${limitBytes - 2}`,
          code: 'too_big',
        },
      ]);
    }
    const separator = current.length === 0 ? 0 : 1;
    if (size + separator + bytes > limitBytes) {
      chunks.push(current);
      current = [];
      size = 2;
    }
    size += (current.length === 0 ? 0 : 1) + bytes;
    current.push(item);
  });
  if (current.length > 0) chunks.push(current);
  return chunks;
}
