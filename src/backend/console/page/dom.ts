/** Children an element is built with: nodes, text (always as text, never parsed as HTML), or nothing. */
export type Child = Node | string | number | false | null | undefined | readonly Child[];

type Props = Record<string, string | number | boolean | EventListener | undefined>;

/**
 * Builds an element. Attributes named `on…` are listeners; `false` and `undefined` leave an attribute out. Text goes
 * in as text nodes, so nothing an approval or a connector sent can become markup.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/**
 * A JSON value as a tree: objects and arrays collapse (`<details>`), open down to `openDepth` levels; every leaf
 * shows its type by its style and by its JSON spelling (strings quoted).
 */
export function jsonTree(value: unknown, openDepth = 1, label?: string): HTMLElement {
  const key = label === undefined ? null : h('span', { class: 'tree-key' }, label);
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value)
      ? value.map((item, index) => [String(index), item] as const)
      : Object.entries(value);
    const size = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
    return h(
      'details',
      { class: 'tree', open: openDepth > 0 },
      h('summary', {}, key, h('span', { class: 'tree-size' }, size)),
      entries.length === 0
        ? h('div', { class: 'tree-empty' }, Array.isArray(value) ? 'empty list' : 'empty object')
        : h(
            'ul',
            {},
            entries.map(([name, item]) => h('li', {}, jsonTree(item, openDepth - 1, name))),
          ),
    );
  }
  const type = value === null ? 'null' : typeof value;
  return h('div', { class: 'tree-leaf' }, key, h('span', { class: `tree-${type}` }, JSON.stringify(value)));
}

const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 365],
];

/** How long ago (or how far ahead) an instant is, in the reader's words: "3 minutes ago", "in 2 hours". */
export function relative(iso: string, now = Date.now()): string {
  let amount = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(amount) < size) return RELATIVE.format(Math.round(amount), unit);
    amount /= size;
  }
  return RELATIVE.format(Math.round(amount), 'year');
}

/**
 * Every date of the page in one format: the reader's locale's, then how long ago it is; the exact instant (ISO
 * 8601, UTC) on hover.
 */
export function time(iso: string | undefined): HTMLElement {
  if (iso === undefined) return h('span', {}, '—');
  return h('time', { datetime: iso, title: iso }, `${DATE.format(new Date(iso))} (${relative(iso)})`);
}

/** A status word in a badge: the word itself carries the meaning, the color only repeats it. */
export function badge(
  text: string,
  tone: 'neutral' | 'good' | 'bad' | 'busy' | 'warn' = 'neutral',
): HTMLElement {
  return h('span', { class: `badge badge-${tone}` }, text);
}
