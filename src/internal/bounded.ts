/**
 * The most characters of one text from the network that a log line or a span attribute copies: an id or a type a
 * task carries, a path with such an id in it, a line of an error's message or stack, a string of an error's body.
 * The service, a source or a client decides how long those are; a line of the kit's logs and a span stay small
 * whatever they send.
 */
export const NETWORK_TEXT_LIMIT = 512;

/**
 * `text`, cut at `limit` characters when it is longer, saying how many it left out: `ab…(+3 characters)`. A pair of
 * UTF-16 surrogates is never cut in two.
 */
export function bounded(text: string, limit = NETWORK_TEXT_LIMIT): string {
  if (text.length <= limit) return text;
  const code = text.charCodeAt(limit - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
  return `${text.slice(0, end)}…(+${text.length - end} characters)`;
}

/** `text` with each of its lines {@link bounded}: for a message or a stack, whose lines are short unless they quote. */
export function boundedLines(text: string, limit = NETWORK_TEXT_LIMIT): string {
  if (text.length <= limit) return text;
  return text
    .split('\n')
    .map((line) => bounded(line, limit))
    .join('\n');
}
