import { api, type TaskInfo } from '../api.js';
import { badge, type Child, fill, h, jsonTree, time } from '../dom.js';
import { errorMessage, touches } from '../view.js';
import type { Panel } from './system.js';

/** A task's status as the console says it: waiting, leased, or done. */
export function taskStatus(task: TaskInfo): HTMLElement {
  if (task.status === 'completed') return badge('done', 'good');
  if (task.status === 'leased') return badge('leased', 'busy');
  return badge('waiting');
}

/** A result's status, and its meta as a tree. */
export function taskResult(task: TaskInfo): Child {
  if (task.result === undefined) return '—';
  return [
    badge(task.result.status, task.result.status === 'success' ? 'good' : 'bad'),
    task.result.meta === undefined ? null : jsonTree(task.result.meta, 1, 'meta'),
  ];
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

/** Every task of the system, newest first, live. */
export function tasksPanel(systemId: string): Panel {
  const element = h('div', { class: 'panel' });
  let timer: number | undefined;
  const panel: Panel = {
    element,
    async update(overview, changes) {
      if (!touches(changes, ['task', 'approval'], systemId) && changes !== undefined) return;
      window.clearTimeout(timer);
      try {
        const { tasks, now } = await api.tasks(systemId);
        timer = reloadWhenLeaseEnds(tasks, now, () => void panel.update(overview));
        fill(
          element,
          tasks.length === 0
            ? h('p', { class: 'notice' }, 'No task yet: act on an approval to create one.')
            : h(
                'div',
                { class: 'table-scroll' },
                h(
                  'table',
                  {},
                  h(
                    'thead',
                    {},
                    h(
                      'tr',
                      {},
                      [
                        'Created',
                        'Type',
                        'Approval',
                        'Status',
                        'Deliveries',
                        'Result',
                        'Lease ends / done',
                      ].map((heading) => h('th', { scope: 'col' }, heading)),
                    ),
                  ),
                  h(
                    'tbody',
                    {},
                    [...tasks]
                      .reverse()
                      .map((task) =>
                        h(
                          'tr',
                          { 'data-task-id': task.id },
                          h('td', {}, time(task.createdAt)),
                          h(
                            'td',
                            {},
                            task.type,
                            task.encrypted ? h('span', { class: 'muted' }, ' (credentials sealed)') : null,
                          ),
                          h('td', { class: 'mono' }, task.approvalId),
                          h('td', { class: 'task-status' }, taskStatus(task)),
                          h('td', { class: 'task-deliveries' }, String(task.deliveries)),
                          h('td', { class: 'task-result' }, taskResult(task)),
                          h('td', {}, time(task.completedAt ?? task.leaseExpiresAt)),
                        ),
                      ),
                  ),
                ),
              ),
        );
      } catch (error) {
        fill(element, errorMessage(error));
      }
    },
    dispose: () => window.clearTimeout(timer),
  };
  return panel;
}
