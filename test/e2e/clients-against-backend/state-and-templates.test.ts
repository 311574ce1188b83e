/**
 * Connector state (15, 16) and UI templates (17, 18) through the client against the reference backend, over
 * real HTTP.
 * The setup the files of this folder share is in ./support.ts.
 */
import { describe, expect, it } from 'vitest';
import { at, clientsAgainstBackend } from './support.js';

const { backend, tenant } = clientsAgainstBackend();

describe('Integration API (v2)', () => {
  describe('state (15, 16)', () => {
    it('Get state is the state record, {} before the first write; Update state replaces it', async () => {
      const { v2, system } = tenant();
      const other = tenant();
      const initial = await v2.getState();
      expect(initial).toEqual({
        id: expect.any(String),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        state: {},
      });

      await v2.putState({ cursor: at(5), nested: { ids: ['a', 'b'] } });
      expect(await v2.getState()).toMatchObject({
        id: initial?.id,
        state: { cursor: at(5), nested: { ids: ['a', 'b'] } },
      });
      await v2.putState({ other: true });
      const replaced = await v2.getState();
      expect(replaced).toEqual({
        ...replaced,
        id: initial?.id,
        createdAt: initial?.createdAt,
        state: { other: true },
      });
      expect(backend().getState(system.id).state).toEqual({ other: true });
      expect((await other.v2.getState())?.state).toEqual({});
    });
  });

  describe('UI templates (17, 18)', () => {
    it('Add or update UI templates (GET with a body) then Get UI templates, keyed by schema id', async () => {
      const { v2 } = tenant();
      const other = tenant();
      expect(await v2.getUiTemplates()).toEqual([]);
      await v2.putUiTemplates([
        { type: 'detail', schemaId: 'purchase-order', template: { title: '{{title}}' } },
        { type: 'detail', schemaId: 'leave-request', template: { title: '{{employee}}' } },
        { type: 'card', schemaId: 'purchase-order', template: { lines: ['{{amount}}'] } },
      ]);
      const first = await v2.getUiTemplates();
      expect(first).toEqual([
        { id: expect.any(String), type: 'card', uiTemplate: { 'purchase-order': { lines: ['{{amount}}'] } } },
        {
          id: expect.any(String),
          type: 'detail',
          uiTemplate: { 'leave-request': { title: '{{employee}}' } },
        },
        { id: expect.any(String), type: 'detail', uiTemplate: { 'purchase-order': { title: '{{title}}' } } },
      ]);

      // Rewriting one replaces its template and keeps its id; the same key twice in a write: the last wins.
      await v2.putUiTemplates([
        { type: 'detail', schemaId: 'purchase-order', template: { title: 'first' } },
        { type: 'detail', schemaId: 'purchase-order', template: { heading: '{{title}}' } },
      ]);
      const second = await v2.getUiTemplates();
      expect(second).toEqual([
        first[0],
        first[1],
        { id: first[2]?.id, type: 'detail', uiTemplate: { 'purchase-order': { heading: '{{title}}' } } },
      ]);
      expect(await other.v2.getUiTemplates()).toEqual([]);
    });
  });
});
