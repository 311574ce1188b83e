/**
 * The end of a `switch` that handles every member of a union: its argument is `never` there, so that a member added
 * to the union and not handled is a compile error at the call. Throws if reached all the same, by a value from code
 * the compiler did not see.
 */
export function unreachable(value: never, what: string): never {
  throw new TypeError(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
