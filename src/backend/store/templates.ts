import { randomUUID } from 'node:crypto';
import type { StoreContext } from './context.js';

/** A UI template as read: `uiTemplate` is keyed by its schema id. */
export interface UiTemplateRecord {
  id: string;
  type: string;
  uiTemplate: Record<string, Record<string, unknown>>;
}

export interface UiTemplateChange {
  type: string;
  schemaId: string;
  template: Record<string, unknown>;
}

export class UiTemplates {
  constructor(private readonly ctx: StoreContext) {}

  /** One element per `(type, schemaId)`, ordered by type then schema id. */
  list(systemId: string): UiTemplateRecord[] {
    return this.ctx.db
      .all<{ id: string; type: string; schemaId: string; template: string }>(
        `SELECT id, type, schema_id AS schemaId, template FROM ui_templates WHERE system_id = ?
         ORDER BY type, schema_id`,
        systemId,
      )
      .map((row) => ({
        id: row.id,
        type: row.type,
        uiTemplate: { [row.schemaId]: JSON.parse(row.template) as Record<string, unknown> },
      }));
  }

  /** Writes in order; an existing `(type, schemaId)` keeps its id and gets the new template. */
  putMany(systemId: string, templates: readonly UiTemplateChange[]): void {
    for (const template of templates) {
      this.ctx.db.run(
        `INSERT INTO ui_templates (system_id, type, schema_id, id, template, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (system_id, type, schema_id) DO UPDATE SET template = excluded.template, updated_at = excluded.updated_at`,
        systemId,
        template.type,
        template.schemaId,
        randomUUID(),
        JSON.stringify(template.template),
        this.ctx.now(),
      );
    }
    this.ctx.changed({ kind: 'templates', systemId });
  }
}
