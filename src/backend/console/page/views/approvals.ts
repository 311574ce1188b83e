import { APPROVALS_PER_PAGE } from '../../limits.js';
import { type ApprovalView, api, type SystemView, type TaskInfo } from '../api.js';
import { badge, fill, h, time } from '../dom.js';
import { titleOf } from '../template.js';
import { errorMessage, pageTitle, setQuery, touches } from '../view.js';
import { actionForm, actionState } from './act.js';
import type { Panel } from './panel.js';
import { approvalLink, outcomeOf, reloadWhenLeaseEnds, taskStatus } from './tasks.js';

interface Row {
  element: HTMLElement;
  summary: HTMLElement;
  note: HTMLElement;
  toggle: HTMLButtonElement;
  form: ReturnType<typeof actionForm>;
  key: string;
}

const FILTERS = { '': 'All', waiting: 'Waiting for an action', resolved: 'Resolved' } as const;

/**
 * Who an approval waits for: the organization's user it maps to; else the name the source gives in the approval's
 * data (`data.approverName`, a string); else the source's id.
 */
export function approverName(approval: ApprovalView): HTMLElement {
  const user = approval.approverUser;
  if (user === undefined) {
    const named = (approval.data as { approverName?: unknown } | undefined)?.approverName;
    if (typeof named === 'string' && named.trim() !== '') {
      return h(
        'span',
        { title: `${approval.approver} in the source · no user of the organization maps to it` },
        named,
      );
    }
    return h(
      'span',
      { class: 'mono', title: 'No user of the organization maps to this id' },
      approval.approver,
    );
  }
  return h(
    'span',
    { title: `${approval.approver} in the source · ${user.email}` },
    `${user.firstName} ${user.lastName}`.trim() || user.email,
  );
}

/**
 * A system's approvals, newest first, a row each, filtered and searched (both in the address: `?q=…&show=waiting`),
 * 50 to a page; each row opens the approval's page, and its *Act* button the form to act on it.
 */
export function approvalsPanel(systemId: string, query: URLSearchParams): Panel {
  const search = h('input', { id: 'approval-search', type: 'search', autocomplete: 'off', maxlength: 200 });
  search.value = query.get('q') ?? '';
  const show = h(
    'select',
    { id: 'approval-filter' },
    Object.entries(FILTERS).map(([value, text]) => h('option', { value }, text)),
  );
  show.value = query.get('show') ?? '';
  if (!(show.value in FILTERS)) show.value = '';
  let offset = Math.max(0, Number.parseInt(query.get('from') ?? '0', 10) || 0);
  const summary = h('p', { class: 'muted', 'aria-live': 'polite' });
  const hidden = h('div', {});
  const list = h('div', { class: 'approvals' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of approvals' });
  const element = h(
    'div',
    {},
    h(
      'form',
      { class: 'controls', role: 'search', onsubmit: (event: Event) => event.preventDefault() },
      h('div', {}, h('label', { for: 'approval-search' }, 'Search'), search),
      h('div', {}, h('label', { for: 'approval-filter' }, 'Show'), show),
    ),
    summary,
    hidden,
    list,
    pager,
  );
  const rows = new Map<string, Row>();
  /** Approvals acted on from this list: kept in sight with their result, even when the filter no longer shows them. */
  const actedOn = new Set<string>();
  let overview: SystemView | undefined;
  let timer: number | undefined;
  let typing: number | undefined;

  const load = async () => {
    if (overview === undefined) return;
    const current = overview;
    window.clearTimeout(timer);
    try {
      const [{ approvals, total }, { tasks, now }] = await Promise.all([
        api.approvals(systemId, {
          limit: APPROVALS_PER_PAGE,
          offset,
          search: search.value.trim(),
          ...(show.value === '' ? {} : { resolved: show.value === 'resolved' }),
        }),
        api.tasks(systemId),
      ]);
      timer = reloadWhenLeaseEnds(tasks, now, () => void load());
      summary.textContent = summaryOf(total, offset, approvals.length);
      const byApproval = Map.groupBy(tasks, (task) => task.approvalId);
      const keptShown = await actedOnOutside(systemId, actedOn, approvals);
      fill(hidden, keptNotice(keptShown));
      const shown = [...keptShown, ...approvals].map((approval) => {
        const row = rows.get(approval.id) ?? newRow(systemId, approval.id, () => actedOn.add(approval.id));
        rows.set(approval.id, row);
        updateRow(row, approval, byApproval.get(approval.id) ?? [], current, systemId);
        return row.element;
      });
      for (const id of rows.keys())
        if (!shown.some((element) => element.dataset.approvalId === id)) rows.delete(id);
      // Moving an element would take the focus from a form being filled in: only a new order is applied.
      const order = [...list.children];
      if (order.length !== shown.length || order.some((child, index) => child !== shown[index])) {
        list.replaceChildren(...shown);
      }
      fill(
        pager,
        offset > 0
          ? h('button', { type: 'button', onclick: () => turn(-1) }, `Newer ${APPROVALS_PER_PAGE}`)
          : null,
        offset + approvals.length < total
          ? h('button', { type: 'button', onclick: () => turn(1) }, `Older ${APPROVALS_PER_PAGE}`)
          : null,
      );
    } catch (error) {
      fill(summary, errorMessage(error));
    }
  };

  const turn = (by: number) => {
    offset = Math.max(0, offset + by * APPROVALS_PER_PAGE);
    setQuery({ from: offset === 0 ? '' : String(offset) });
    void load().then(() => summary.focus());
  };
  summary.setAttribute('tabindex', '-1');

  const filtered = () => {
    offset = 0;
    setQuery({ q: search.value.trim(), show: show.value, from: '' });
    void load();
  };
  search.addEventListener('input', () => {
    window.clearTimeout(typing);
    typing = window.setTimeout(filtered, 250);
  });
  show.addEventListener('change', filtered);

  return {
    element,
    async update(next, changes) {
      overview = next;
      pageTitle(`Approvals · ${next.system.name}`);
      if (changes !== undefined && !touches(changes, ['approval', 'task'], systemId)) return;
      await load();
    },
    dispose() {
      window.clearTimeout(timer);
      window.clearTimeout(typing);
    },
  };
}

/** What the list shows, in words: how many approvals match, and which of them this page holds. */
function summaryOf(total: number, offset: number, count: number): string {
  if (total === 0) return 'No approval matches.';
  const last = Math.min(total, offset + count);
  return `${total} approval${total === 1 ? '' : 's'}${total > count ? `, ${offset + 1} to ${last} shown` : ''}, newest first.`;
}

/** The approvals acted on from the list that the page no longer holds, as they are now (gone ones left out). */
async function actedOnOutside(
  systemId: string,
  actedOn: ReadonlySet<string>,
  approvals: readonly ApprovalView[],
): Promise<ApprovalView[]> {
  const missing = [...actedOn].filter((id) => !approvals.some((approval) => approval.id === id));
  const kept = await Promise.all(
    missing.map((id) =>
      api.approval(systemId, id).then(
        ({ approval }) => approval,
        () => undefined,
      ),
    ),
  );
  return kept.filter((approval) => approval !== undefined);
}

function keptNotice(kept: readonly ApprovalView[]): HTMLElement | null {
  if (kept.length === 0) return null;
  return h(
    'p',
    { class: 'notice' },
    `The filter no longer matches ${kept.map((approval) => approval.id).join(', ')}; `,
    'shown here because you acted on it.',
  );
}

let rowIds = 0;

function newRow(systemId: string, approvalId: string, acted: () => void): Row {
  const id = `row-${++rowIds}`;
  const form = actionForm(systemId, approvalId);
  form.element.id = `${id}-act`;
  form.element.hidden = true;
  form.element.addEventListener('submit', acted);
  const toggle = h(
    'button',
    { type: 'button', class: 'act-toggle', 'aria-expanded': 'false', 'aria-controls': form.element.id },
    'Act',
  );
  toggle.addEventListener('click', () => {
    const open = form.element.hidden;
    form.element.hidden = !open;
    toggle.setAttribute('aria-expanded', String(open));
    toggle.textContent = open ? 'Close' : 'Act';
    if (open) form.element.querySelector<HTMLElement>('textarea, input, button')?.focus();
  });
  const summary = h('div', { class: 'row-main' });
  const note = h('p', { class: 'row-note small' });
  const element = h(
    'article',
    { class: 'panel approval-row', 'aria-labelledby': `${id}-title`, 'data-approval-id': approvalId },
    h('div', { class: 'row-head' }, summary, toggle),
    note,
    form.element,
  );
  summary.dataset.titleId = `${id}-title`;
  return { element, summary, note, toggle, form, key: '' };
}

/** Rebuilds only the parts of a row that changed, so a comment being typed survives a live update. */
function updateRow(
  row: Row,
  approval: ApprovalView,
  tasks: readonly TaskInfo[],
  overview: SystemView,
  systemId: string,
): void {
  const key = JSON.stringify([approval, tasks, overview.templates]);
  if (key !== row.key) {
    row.key = key;
    const last = tasks.at(-1);
    fill(
      row.summary,
      h(
        'h2',
        { id: row.summary.dataset.titleId ?? '', class: 'row-title' },
        approvalLink(systemId, approval.id, titleOf(overview.templates, approval)),
      ),
      h(
        'p',
        { class: 'row-meta small' },
        approval.resolved ? badge('resolved', 'good') : badge('waiting', 'warn'),
        ' ',
        h('span', { class: 'mono wrap' }, approval.id),
        ' · for ',
        approverName(approval),
        ' · modified ',
        time(approval.lastModified),
        last === undefined
          ? null
          : h(
              'span',
              { class: 'row-task', 'data-task-id': last.id },
              ' · last task ',
              h('span', {}, last.type),
              ' ',
              h('span', { class: 'task-status' }, taskStatus(last)),
              tasks.length > 1 ? ` (${tasks.length} tasks)` : '',
            ),
      ),
    );
    const { note } = actionState(approval, tasks);
    row.note.textContent = note ?? failureOf(last) ?? '';
    // A resolved approval offers no action: a form left open closes, and its button is off.
    if (approval.resolved && !row.form.element.hidden) row.toggle.click();
    row.toggle.disabled = approval.resolved;
    row.toggle.title = approval.resolved ? 'Resolved: there is nothing left to act on.' : '';
  }
  row.form.update(overview, approval, tasks);
}

/** Why the last task failed, in one line: the message its result gives, else its code, else its status. */
function failureOf(task: TaskInfo | undefined): string | undefined {
  if (task === undefined || outcomeOf(task) !== 'failed') return undefined;
  const meta = task.result?.meta as { message?: unknown; code?: unknown } | undefined;
  const reason = [meta?.message, meta?.code, task.result?.status].find(
    (value): value is string => typeof value === 'string' && value !== '',
  );
  return `The ${task.type} task failed${reason === undefined ? '' : `: ${reason}`}`;
}
