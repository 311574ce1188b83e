import { Writable } from 'node:stream';

/** A log line as the connector's pino logger writes it, parsed. */
export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A destination for the connector's `logger` option that keeps every line it is given, parsed, in `lines`. */
export function captureLogs(): { lines: LogLine[]; destination: Writable } {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination };
}
