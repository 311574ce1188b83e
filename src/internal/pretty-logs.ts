/**
 * How the kit prints a pino line for a person (pino-pretty's options): one readable line with its fields below,
 * the time of day, no process id nor host. The same in a worker on a terminal and in `connector dev`.
 */
export function prettyLogOptions(colorize: boolean) {
  return { colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' };
}
