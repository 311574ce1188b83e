import { describe, expect, it } from 'vitest';
import { SimulatedInbox, type SimulatedTask } from '../simulator/inbox.js';
import {
  parseCount,
  parseExpand,
  parseFilter,
  parseOrderBy,
  parseTaskKey,
  QueryError,
} from '../simulator/query.js';

const inbox = new SimulatedInbox({ seed: 4, initialTasks: 30 });
for (let step = 0; step < 60; step += 1) inbox.step();
const tasks = inbox.tasks();
const ids = (selected: readonly SimulatedTask[]) => selected.map((task) => task.instanceId);

describe("the simulated task collection's query options", () => {
  it('filters with eq, and, or and parentheses, as the client asks', () => {
    const filter = parseFilter(
      "(Status eq 'READY' or Status eq 'RESERVED' or Status eq 'IN_PROGRESS') and (TaskDefinitionID eq 'TS00008267')",
    );

    const selected = tasks.filter(filter);

    // Tasks of the definition that are completed, and open tasks of other definitions, are both left out.
    expect(tasks.some((task) => task.status === 'COMPLETED' && task.definition.id === 'TS00008267')).toBe(
      true,
    );
    expect(tasks.some((task) => task.status === 'RESERVED' && task.definition.id === 'TS00008267')).toBe(
      true,
    );
    expect(selected.length).toBeGreaterThan(0);
    expect(ids(selected)).toEqual(
      ids(tasks.filter((task) => task.status !== 'COMPLETED' && task.definition.id === 'TS00008267')),
    );
  });

  it('reads a doubled quote in a literal as one quote, and a keyword in quotes as a value', () => {
    expect(tasks.filter(parseFilter("Priority eq 'it''s' or Priority eq 'or'"))).toEqual([]);
  });

  it.each([
    "Title eq 'x'",
    "Status ne 'READY'",
    'Status eq READY',
    "(Status eq 'READY'",
    "Status eq 'READY' Status",
    "Status eq 'READY",
    '',
  ])('refuses the $filter %j', (text) => {
    expect(() => parseFilter(text)).toThrow(QueryError);
  });

  it('sorts by CreatedOn, then InstanceID, either way', () => {
    const ascending = [...tasks].sort(parseOrderBy('CreatedOn asc,InstanceID asc'));
    const descending = [...tasks].sort(parseOrderBy('CreatedOn desc, InstanceID desc'));

    expect(ascending.map((task) => task.createdOn.getTime())).toEqual(
      tasks.map((task) => task.createdOn.getTime()).sort((a, b) => a - b),
    );
    expect(ids(descending)).toEqual(ids(ascending).reverse());
    expect(() => parseOrderBy('Priority asc')).toThrow(QueryError);
    expect(() => parseOrderBy('CreatedOn up')).toThrow(QueryError);
  });

  it('takes whole numbers for $skip and $top, and only the navigation properties it can expand', () => {
    expect(parseCount('$top', '100')).toBe(100);
    expect(() => parseCount('$top', '-1')).toThrow(QueryError);
    expect(() => parseCount('$skip', '1e3')).toThrow(QueryError);
    expect([...parseExpand('PotentialOwners, CustomAttributeData')]).toEqual([
      'PotentialOwners',
      'CustomAttributeData',
    ]);
    expect(() => parseExpand('Description')).toThrow(QueryError);
  });

  it("reads a task's key in either order, a doubled quote as one, and refuses any other key", () => {
    expect(parseTaskKey("SAP__Origin='LOCAL_TGW',InstanceID='000001750567'")).toEqual({
      origin: 'LOCAL_TGW',
      instanceId: '000001750567',
    });
    expect(parseTaskKey("InstanceID='A''1',SAP__Origin='X'")).toEqual({ origin: 'X', instanceId: "A'1" });
    for (const key of [
      "InstanceID='1'",
      "SAP__Origin='X',InstanceID='1',",
      "SAP__Origin='X',InstanceID='1',Name='N'",
      "SAP__Origin=X,InstanceID='1'",
    ]) {
      expect(() => parseTaskKey(key)).toThrow(QueryError);
    }
  });
});
