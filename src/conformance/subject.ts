/**
 * How the battery holds the author's code: the driver, whose errors are labelled as the driver's (a check that
 * cannot run is an `error`, not the connector's failure), and connector instances, whose reads of the source the
 * battery watches so that it can change the source while the connector is still reading.
 * @module
 */
import type { Connector } from '../connector/index.js';
import type { SourceKind, SourceOfKind } from '../connector/internal.js';
import type { ConformanceSubject, SourceDriver } from './driver.js';
import { CheckErrored, CheckSkipped, ConformanceFailure, messageOf } from './report.js';

/** The members of a driver the battery calls: an error thrown by one of them is the driver's. */
const DRIVER_MEMBERS: ReadonlySet<string> = new Set([
  'create',
  'change',
  'resolve',
  'delete',
  'sameInstant',
  'holds',
  'actions',
  'fail',
  'setClock',
  'shortPages',
  'credentials',
  'close',
]);

/** The battery's own verdicts pass through a driver's callback (`sameInstant`) untouched. */
function isVerdict(error: unknown): boolean {
  return (
    error instanceof ConformanceFailure || error instanceof CheckSkipped || error instanceof CheckErrored
  );
}

function driverError(member: string, error: unknown): unknown {
  return isVerdict(error) ? error : new CheckErrored(`the driver's ${member}() threw: ${messageOf(error)}`);
}

/** Calls `call`, turning what it throws, or rejects with, into the driver's error, named `member`. */
export function labelled(member: string, call: () => unknown): unknown {
  let result: unknown;
  try {
    result = call();
  } catch (error) {
    throw driverError(member, error);
  }
  if (!(result instanceof Promise)) return member === 'fail' ? restoreOf(result) : result;
  return result.then(
    (value: unknown) => (member === 'fail' ? restoreOf(value) : value),
    (error: unknown) => {
      throw driverError(member, error);
    },
  );
}

/** The restore function `fail()` gave, labelled as the driver's too. */
function restoreOf(restore: unknown): unknown {
  if (typeof restore !== 'function') return restore;
  return () => labelled('fail', () => (restore as () => unknown)());
}

/**
 * The driver as the battery calls it: every member in {@link DRIVER_MEMBERS} throws a {@link CheckErrored} naming
 * itself when it fails, and every method is called on the driver itself (so that its private fields work).
 */
export function labelledDriver<D extends SourceDriver>(driver: D): D {
  return new Proxy(driver, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (typeof property !== 'string' || !DRIVER_MEMBERS.has(property)) return method.bind(target);
      return (...args: unknown[]) => labelled(property, () => method.apply(target, args));
    },
  });
}

/** A new driver of the subject, labelled; the subject's own failure to make one is a {@link CheckErrored}. */
export async function newDriver<D extends SourceDriver>(
  subject: ConformanceSubject<D>,
): Promise<{ raw: D; driver: D }> {
  let raw: D;
  try {
    raw = await subject.driver();
  } catch (error) {
    throw new CheckErrored(`the subject's driver() threw: ${messageOf(error)}`);
  }
  return { raw, driver: labelledDriver(raw) };
}

/** A new connector of the subject over `driver` (the author's own, not labelled). */
export function newConnector<D extends SourceDriver>(
  subject: ConformanceSubject<D>,
  driver: D,
): Connector<object> {
  try {
    return subject.connector(driver);
  } catch (error) {
    throw new CheckErrored(`the subject's connector() threw: ${messageOf(error)}`);
  }
}

/** Which read of the source yielded a record: a sync run's `changes()` or `snapshot()`, or `lookup()`. */
export type ReadKind = 'changes' | 'lookup';

/** The method a sync run reads, by kind of source: what {@link watchReads} watches as its `changes` read. */
export const SYNC_READS = {
  incremental: 'changes',
  snapshot: 'snapshot',
} as const satisfies { [K in SourceKind]: keyof SourceOfKind<K> };

/**
 * Called after the connector has yielded its `count`-th record of one read (from 1), before the kit gets it: the
 * connector is suspended at its `yield`, having computed that record and read what it read so far.
 */
export type ReadHook = (kind: ReadKind, count: number) => void | Promise<void>;

/**
 * Replaces the connector's source by one whose reads call `hook()` after each record they yield. The source keeps
 * its kind and every other member; the connector is changed in place and returned.
 */
export function watchReads(
  connector: Connector<object>,
  hook: () => ReadHook | undefined,
): Connector<object> {
  const source = connector.source as unknown as Record<string, unknown>;
  const watched: Record<string, unknown> = { ...source };
  const wrap = (kind: ReadKind, name: string) => {
    const read = source[name];
    if (typeof read !== 'function') return;
    watched[name] = async function* (...args: unknown[]) {
      let count = 0;
      for await (const record of (read as (...a: unknown[]) => AsyncIterable<unknown>).apply(source, args)) {
        count += 1;
        await hook()?.(kind, count);
        yield record;
      }
    };
  };
  wrap('changes', SYNC_READS[connector.source.kind]);
  wrap('lookup', 'lookup');
  Object.defineProperty(connector, 'source', { value: watched, configurable: true, writable: true });
  return connector;
}
