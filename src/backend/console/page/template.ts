import type { ApprovalView, UiTemplateRecord } from './api.js';
import { type Child, h, jsonTree } from './dom.js';

/** Of the template types a connector publishes for one schema, the one the console shows: `detail`, else `card`. */
const PREFERRED_TYPES = ['detail', 'card'];

/** The template the connector published for the approval's schema, with its type; `undefined` when there is none. */
export function templateFor(
  templates: readonly UiTemplateRecord[],
  schemaId: string,
): { type: string; template: Record<string, unknown> } | undefined {
  const candidates = templates
    .filter((record) => Object.hasOwn(record.uiTemplate, schemaId))
    .map((record) => ({
      type: record.type,
      template: record.uiTemplate[schemaId] as Record<string, unknown>,
    }));
  for (const type of PREFERRED_TYPES) {
    const found = candidates.find((candidate) => candidate.type === type);
    if (found !== undefined) return found;
  }
  return candidates[0];
}

/**
 * Renders an approval with a UI template, as `docs/console.md` describes: `title`, `subtitle` and `description`
 * are texts with `{{path}}` placeholders, `fields` a list of paths (or `{label, path}`). `undefined` when the
 * template has none of them, so the caller shows the data as a tree instead.
 */
export function renderTemplate(
  template: Record<string, unknown>,
  approval: ApprovalView,
): HTMLElement | undefined {
  const text = (key: string) =>
    typeof template[key] === 'string' ? fillIn(template[key], approval) : undefined;
  const title = text('title');
  const subtitle = text('subtitle');
  const description = text('description');
  const fields = Array.isArray(template.fields)
    ? template.fields.flatMap((field) => fieldOf(field, approval))
    : [];
  if (title === undefined && subtitle === undefined && description === undefined && fields.length === 0) {
    return undefined;
  }
  return h(
    'div',
    { class: 'rendered' },
    title === undefined ? null : h('p', { class: 'rendered-title' }, title),
    subtitle === undefined ? null : h('p', { class: 'rendered-subtitle' }, subtitle),
    description === undefined ? null : h('p', {}, description),
    fields.length === 0
      ? null
      : h(
          'dl',
          { class: 'fields' },
          fields.map(({ label, value }) => [h('dt', {}, label), h('dd', {}, value)]),
        ),
  );
}

function fieldOf(field: unknown, approval: ApprovalView): { label: string; value: Child }[] {
  let label: string | undefined;
  let path: string | undefined;
  if (typeof field === 'string') {
    label = field;
    path = field;
  } else if (field !== null && typeof field === 'object') {
    const { label: named, path: at } = field as { label?: unknown; path?: unknown };
    if (typeof at === 'string') path = at;
    label = typeof named === 'string' ? named : path;
  }
  if (label === undefined || path === undefined) return [];
  return [{ label, value: readable(lookUp(approval, path)) }];
}

/** A value as a reader reads it: lists as lists, links as links, nothing as "—", objects as label and value. */
export function readable(value: unknown): Child {
  if (value === undefined || value === null || value === '') return '—';
  if (Array.isArray(value)) {
    return value.length === 0
      ? '—'
      : h(
          'ul',
          { class: 'value-list' },
          value.map((item) => h('li', {}, readable(item))),
        );
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '—';
    if (entries.length > 12) return jsonTree(value, 0);
    return h(
      'dl',
      { class: 'fields nested' },
      entries.map(([key, item]) => [h('dt', {}, key), h('dd', {}, readable(item))]),
    );
  }
  if (typeof value === 'string' && /^https?:\/\/\S+$/.test(value)) {
    return h('a', { href: value, rel: 'noopener noreferrer', target: '_blank' }, value);
  }
  return display(value);
}

/** A path is looked up in the approval (`id`, `data.amount`), then in its data (`amount`). */
export function lookUp(approval: ApprovalView, path: string): unknown {
  const walk = (from: unknown) =>
    path.split('.').reduce<unknown>((value, key) => {
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
      return (value as Record<string, unknown>)[key];
    }, from);
  return walk(approval) ?? walk(approval.data);
}

function fillIn(text: string, approval: ApprovalView): string {
  return text.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (_match, path: string) => display(lookUp(approval, path)));
}

function display(value: unknown): string {
  if (value === undefined || value === null) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** The approval's title as its template writes it; its id when the template has no title. */
export function titleOf(templates: readonly UiTemplateRecord[], approval: ApprovalView): string {
  const template = templateFor(templates, approval.schemaId)?.template;
  const title = typeof template?.title === 'string' ? fillIn(template.title, approval).trim() : '';
  return title === '' || title === '—' ? approval.id : title;
}
