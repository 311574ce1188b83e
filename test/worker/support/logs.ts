import { Writable } from 'node:stream';

/** A log line as the connector's pino logger writes it, parsed. */
export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/**
 * A destination for the connector's `logger` option that keeps every line it is given, parsed, in `lines`, and as it
 * was written in `raw`.
 */
export function captureLogs(): { lines: LogLine[]; raw: string[]; destination: Writable } {
  const lines: LogLine[] = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) {
        if (line.trim() === '') continue;
        raw.push(line);
        lines.push(JSON.parse(line));
      }
      done();
    },
  });
  return { lines, raw, destination };
}
