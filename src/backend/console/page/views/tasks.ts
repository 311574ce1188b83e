import { api, type TaskEvent, type TaskInfo } from '../api.js';
import { badge, type Child, fill, h, jsonTree, time } from '../dom.js';
import { errorMessage, pageTitle, setQuery, touches } from '../view.js';
import type { Panel } from './panel.js';

/** A task's outcome: still on its way, or finished. Finished is `succeeded` only when its result is a success. */
export type TaskOutcome = 'waiting' | 'leased' | 'succeeded' | 'failed';

export function outcomeOf(task: TaskInfo): TaskOutcome {
  if (task.status !== 'completed') return task.status;
  return task.result?.status === 'success' ? 'succeeded' : 'failed';
}

/** A task's headline, by word and by colour: waiting, leased, succeeded, or failed. */
export function taskStatus(task: TaskInfo): HTMLElement {
  const outcome = outcomeOf(task);
  const tone = { waiting: 'neutral', leased: 'busy', succeeded: 'good', failed: 'bad' } as const;
  return badge(outcome, tone[outcome]);
}

/** A result's status, and its meta as a tree. */
export function taskResult(task: TaskInfo): Child {
  if (task.result === undefined) return '—';
  return [
    h('span', { class: 'mono' }, task.result.status),
    task.result.meta === undefined ? null : jsonTree(task.result.meta, 1, 'meta'),
  ];
}

/** A link to a task's approval, on the approval's own page. */
export function approvalLink(systemId: string, approvalId: string, text: Child = approvalId): HTMLElement {
  return h(
    'a',
    { href: `#/systems/${encodeURIComponent(systemId)}/approvals/${encodeURIComponent(approvalId)}` },
    text,
  );
}

/** What happened to a task, oldest first: what the backend kept of it, and what its record says. */
export function timeline(task: TaskInfo & { timeline: TaskEvent[] }): HTMLElement {
  const events = [...task.timeline];
  // The record has the creation and the result even when the backend restarted since.
  if (!events.some((event) => event.type === 'created'))
    events.unshift({ type: 'created', at: task.createdAt });
  if (task.completedAt !== undefined && !events.some((event) => event.type === 'completed')) {
    events.push({
      type: 'completed',
      at: task.completedAt,
      ...(task.result ? { resultStatus: task.result.status } : {}),
    });
  }
  return h(
    'ol',
    { class: 'timeline', 'aria-label': `Timeline of task ${task.id}` },
    events.map((event) => h('li', { 'data-event': event.type }, time(event.at), ' ', describe(event, task))),
  );
}

function describe(event: TaskEvent, task: TaskInfo): Child {
  switch (event.type) {
    case 'created':
      return [
        h('strong', {}, 'Created'),
        task.approveComments === '' ? null : [' with the comment ', h('q', {}, task.approveComments)],
      ];
    case 'delivered':
      return [
        h('strong', {}, `Delivery ${event.delivery ?? ''}`),
        event.leaseExpiresAt === undefined
          ? ' to the connector, without a lease (duplicate delivery fault)'
          : [' to the connector, leased until ', time(event.leaseExpiresAt)],
      ];
    case 'leaseEnded':
      return [h('strong', {}, 'Lease ended'), ' early: the task is offered again'];
    case 'completed':
      return [
        h('strong', {}, event.resultStatus === 'success' ? 'Succeeded' : 'Failed'),
        ': the connector reported ',
        h('span', { class: 'mono' }, event.resultStatus ?? task.result?.status ?? '?'),
        task.result?.meta === undefined ? null : jsonTree(task.result.meta, 1, 'meta'),
      ];
  }
}

/**
 * A lease ends on the backend's clock without any write, so no event says so: the page reloads when the first
 * running lease is due to end.
 */
export function reloadWhenLeaseEnds(
  tasks: readonly TaskInfo[],
  now: string,
  reload: () => void,
): number | undefined {
  const ends = tasks.flatMap((task) =>
    task.leaseExpiresAt === undefined ? [] : [Date.parse(task.leaseExpiresAt)],
  );
  if (ends.length === 0) return undefined;
  return window.setTimeout(reload, Math.max(0, Math.min(...ends) - Date.parse(now)) + 100);
}

const FILTERS = { '': 'All', failed: 'Failed', running: 'On their way', succeeded: 'Succeeded' } as const;
type Filter = keyof typeof FILTERS;

function shows(filter: Filter, task: TaskInfo): boolean {
  const outcome = outcomeOf(task);
  if (filter === 'running') return outcome === 'waiting' || outcome === 'leased';
  return filter === '' || outcome === filter;
}

/** Every task of the system, newest first, live; the filter lives in the address (`?show=failed`). */
export function tasksPanel(systemId: string, query: URLSearchParams): Panel {
  const filter = h(
    'select',
    { id: 'task-filter' },
    Object.entries(FILTERS).map(([value, text]) => h('option', { value }, text)),
  );
  filter.value = query.get('show') ?? '';
  if (!(filter.value in FILTERS)) filter.value = '';
  const summary = h('p', { class: 'muted', 'aria-live': 'polite' });
  const list = h('div', {});
  const element = h(
    'div',
    { class: 'panel' },
    h(
      'form',
      { class: 'controls', onsubmit: (event: Event) => event.preventDefault() },
      h('div', {}, h('label', { for: 'task-filter' }, 'Show'), filter),
    ),
    summary,
    list,
  );
  let timer: number | undefined;
  let last: { tasks: TaskInfo[] } | undefined;

  const render = () => {
    if (last === undefined) return;
    const chosen = filter.value as Filter;
    const tasks = [...last.tasks].reverse().filter((task) => shows(chosen, task));
    const failed = last.tasks.filter((task) => outcomeOf(task) === 'failed').length;
    const running = last.tasks.filter((task) => task.status !== 'completed').length;
    summary.textContent = `${last.tasks.length} task${last.tasks.length === 1 ? '' : 's'}: ${failed} failed, ${running} on their way.${chosen === '' ? '' : ` Showing ${FILTERS[chosen].toLowerCase()}: ${tasks.length}.`}`;
    fill(
      list,
      last.tasks.length === 0
        ? h('p', { class: 'notice' }, 'No task yet: act on an approval to create one.')
        : tasks.length === 0
          ? h('p', { class: 'notice' }, `No task is ${FILTERS[chosen].toLowerCase()}.`)
          : taskTable(systemId, tasks),
    );
  };

  filter.addEventListener('change', () => {
    setQuery({ show: filter.value });
    render();
  });

  const panel: Panel = {
    element,
    async update(overview, changes) {
      pageTitle(`Tasks · ${overview.system.name}`);
      if (!touches(changes, ['task', 'approval'], systemId) && changes !== undefined) return;
      window.clearTimeout(timer);
      try {
        const { tasks, now } = await api.tasks(systemId);
        timer = reloadWhenLeaseEnds(tasks, now, () => void panel.update(overview));
        last = { tasks };
        render();
      } catch (error) {
        fill(list, errorMessage(error));
      }
    },
    dispose: () => window.clearTimeout(timer),
  };
  return panel;
}

/** The tasks as a table, a row each, that stacks its cells at a phone's width. */
function taskTable(systemId: string, tasks: readonly TaskInfo[]): HTMLElement {
  const headings = ['Created', 'Task', 'Approval', 'Status', 'Deliveries', 'Result', 'Lease ends / done'];
  return h(
    'table',
    { class: 'stack' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headings.map((heading) => h('th', { scope: 'col' }, heading)),
      ),
    ),
    h(
      'tbody',
      {},
      tasks.map((task) => taskRow(systemId, task)),
    ),
  );
}

function taskRow(systemId: string, task: TaskInfo): HTMLElement {
  return h(
    'tr',
    { 'data-task-id': task.id, class: `task-${outcomeOf(task)}` },
    cell('Created', time(task.createdAt)),
    cell(
      'Task',
      h('strong', {}, task.type),
      task.encrypted ? h('span', { class: 'muted' }, ' (credentials sealed)') : null,
      h('br', {}),
      h('span', { class: 'mono muted small wrap' }, task.id),
      task.approveComments === '' ? null : [h('br', {}), h('q', { class: 'small' }, task.approveComments)],
    ),
    cell(
      'Approval',
      approvalLink(systemId, task.approvalId, h('span', { class: 'mono wrap' }, task.approvalId)),
    ),
    namedCell('task-status', 'Status', taskStatus(task)),
    namedCell('task-deliveries', 'Deliveries', String(task.deliveries)),
    namedCell('task-result', 'Result', taskResult(task)),
    cell('Lease ends / done', time(task.completedAt ?? task.leaseExpiresAt)),
  );
}

/** A table cell that names its column, so that a row stacked at a phone's width still says what each value is. */
function cell(label: string, ...children: Child[]): HTMLTableCellElement {
  return h('td', { 'data-label': label }, ...children);
}

/** The same, with a class tests and styles find it by. */
function namedCell(name: string, label: string, ...children: Child[]): HTMLTableCellElement {
  return h('td', { 'data-label': label, class: name }, ...children);
}
