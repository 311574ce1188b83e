import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../errors.js';

/** The largest request head (request line and headers) the service takes, in bytes: 16 KiB. */
export const MAX_HEAD_BYTES = 16 * 1024;

/**
 * How much of a head Node's HTTP parser reads before it gives up. Far above {@link MAX_HEAD_BYTES}, so that a head
 * over the service's limit is still read whole, and answered in the shape of the API its path names.
 */
export const PARSER_HEAD_BYTES = 1024 * 1024;

/** The 431 for a head over {@link MAX_HEAD_BYTES}, with the kind of any other invalid request. */
export function headersTooLarge(): ServiceError {
  return new ServiceError('Bad Request', `headers: larger than ${MAX_HEAD_BYTES} bytes`, { status: 431 });
}

/** The size of a request's head as it was sent: the request line, each header line, and the blank line. */
export function headBytes(request: IncomingMessage): number {
  let bytes = `${request.method} ${request.url} HTTP/${request.httpVersion}\r\n\r\n`.length;
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) bytes += (raw[i]?.length ?? 0) + (raw[i + 1]?.length ?? 0) + 4;
  return bytes;
}
