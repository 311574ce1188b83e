import { describe, expect, it } from 'vitest';
import { compareKeys, VersionedSource } from './source.js';

const shape = { seed: 42, approvals: 500, versions: 6, changeRate: 0.2 };

describe('the soak’s versioned source', () => {
  it('is the same for the same seed, and another for another seed', () => {
    expect(new VersionedSource(shape).records(5)).toEqual(new VersionedSource(shape).records(5));
    expect(new VersionedSource({ ...shape, seed: 43 }).records(5)).not.toEqual(
      new VersionedSource(shape).records(5),
    );
  });

  it('moves each approval forward in time from one of its versions to the next', () => {
    const source = new VersionedSource(shape);
    let changed = 0;
    for (let index = 0; index < shape.approvals; index += 1) {
      const history = source.history(index, 5);
      expect(history.at(-1)).toEqual(source.current(index, 5));
      for (let at = 1; at < history.length; at += 1) {
        expect(Date.parse(history[at]!.lastModified)).toBeGreaterThan(
          Date.parse(history[at - 1]!.lastModified),
        );
        changed += 1;
      }
    }
    expect(changed).toBeGreaterThan(0);
  });

  it('brings, in every version, changes later than everything before it, and creates approvals later on', () => {
    const source = new VersionedSource(shape);
    for (let version = 1; version < shape.versions; version += 1) {
      expect(compareKeys(source.newest(version), source.newest(version - 1))).toBeGreaterThan(0);
    }
    expect(source.records(0).length).toBeLessThan(source.records(5).length);
    expect(source.records(5)).toHaveLength(shape.approvals);
  });

  it('lists a version in (lastModified, id) order, with records that share a timestamp', () => {
    const records = new VersionedSource(shape).records(5);
    for (let at = 1; at < records.length; at += 1) {
      expect(compareKeys(records[at - 1]!, records[at]!)).toBeLessThan(0);
    }
    const stamps = new Set(records.map((record) => record.lastModified));
    expect(stamps.size).toBeLessThan(records.length);
  });

  it('reads the changes at or after an instant, the instant included', () => {
    const source = new VersionedSource(shape);
    const records = source.records(3);
    const since = Date.parse(records[200]!.lastModified);
    const changes = source.changesSince(3, since);
    expect(changes).toEqual(records.filter((record) => Date.parse(record.lastModified) >= since));
    expect(changes[0]?.lastModified).toBe(records[200]!.lastModified);
    expect(source.changesSince(3, undefined)).toEqual(records);
  });

  it('knows its own ids and no others', () => {
    const source = new VersionedSource(shape);
    expect(source.indexOf(VersionedSource.id(499))).toBe(499);
    expect(source.indexOf(VersionedSource.id(500))).toBeUndefined();
    expect(source.indexOf('PO-1')).toBeUndefined();
  });

  it('refuses a shape out of range, naming the field', () => {
    expect(() => new VersionedSource({ ...shape, changeRate: 1.5 })).toThrow(/changeRate/);
    expect(() => new VersionedSource({ ...shape, approvals: 0 })).toThrow(/approvals/);
  });
});
