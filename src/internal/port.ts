import { z } from 'zod';

/** A TCP port to listen on: an integer from 0 (any free port) to 65535. The one port check of the kit. */
export const Port = z.int().min(0).max(65_535);

/** Whether `value` is a {@link Port}. */
export function isPort(value: unknown): value is number {
  return Port.safeParse(value).success;
}
