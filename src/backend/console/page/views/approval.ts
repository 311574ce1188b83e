import { type ApprovalDetail, api, type SystemView } from '../api.js';
import { badge, type Child, fill, h, jsonTree, time } from '../dom.js';
import { renderTemplate, templateFor, titleOf } from '../template.js';
import { errorMessage, pageTitle, touches, type View } from '../view.js';
import { actionForm, actionState } from './act.js';
import { approverName } from './approvals.js';
import { reloadWhenLeaseEnds, taskResult, taskStatus, timeline } from './tasks.js';

/**
 * An approval's own page (`#/systems/<id>/approvals/<approvalId>`): the approval as its template renders it, its
 * data, its lastModified history, the form to act on it, and each of its tasks with a timeline, live.
 */
export function approvalView(systemId: string, approvalId: string): View {
  const back = h('a', { href: `#/systems/${encodeURIComponent(systemId)}/approvals` }, '← Approvals');
  const heading = h('h1', { id: 'approval-title', class: 'wrap' }, approvalId);
  const meta = h('p', { class: 'approval-meta' });
  const note = h('div', {});
  const form = actionForm(systemId, approvalId);
  const details = h('div', {});
  const tasks = h('div', {});
  const element = h(
    'section',
    { 'aria-labelledby': 'approval-title', class: 'approval-page', 'data-approval-id': approvalId },
    h('p', { class: 'crumbs' }, back),
    heading,
    meta,
    note,
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'act-title' },
      h('h2', { id: 'act-title' }, 'Act on it'),
      form.element,
    ),
    details,
    h('section', { 'aria-labelledby': 'tasks-title' }, h('h2', { id: 'tasks-title' }, 'Tasks'), tasks),
  );
  let overview: SystemView | undefined;
  let shownKey = '';
  let timer: number | undefined;

  const show = (detail: ApprovalDetail, current: SystemView) => {
    const { approval } = detail;
    const title = titleOf(current.templates, approval);
    pageTitle(`${title} · ${current.system.name}`);
    back.textContent = `← Approvals of ${current.system.name}`;
    form.update(current, approval, detail.tasks);
    const key = JSON.stringify([detail.approval, detail.tasks, current.templates]);
    if (key === shownKey) return;
    shownKey = key;
    heading.textContent = title;
    fill(meta, metaOf(approval));
    const { note: said } = actionState(approval, detail.tasks);
    fill(note, said === undefined ? null : h('p', { class: 'notice', role: 'status' }, said));
    fill(details, dataPanel(detail, current));
    fill(
      tasks,
      detail.tasks.length === 0
        ? h('p', { class: 'muted' }, 'No task yet.')
        : [...detail.tasks].reverse().map(taskArticle),
    );
  };

  const load = async () => {
    window.clearTimeout(timer);
    overview ??= await api.system(systemId);
    const current = overview;
    const detail = await api.approval(systemId, approvalId);
    timer = reloadWhenLeaseEnds(detail.tasks, detail.now, () => void load().catch(() => {}));
    show(detail, current);
  };

  return {
    element,
    async update(changes) {
      try {
        if (touches(changes, ['connector', 'templates'], systemId)) overview = undefined;
        if (
          changes !== undefined &&
          !touches(changes, ['approval', 'task', 'connector', 'templates'], systemId)
        )
          return;
        await load();
      } catch (error) {
        fill(note, errorMessage(error));
      }
    },
    dispose: () => window.clearTimeout(timer),
  };
}

/** The approval's state, id, approver, schema and last modification, on one line. */
function metaOf(approval: ApprovalDetail['approval']): Child[] {
  return [
    approval.resolved ? badge('resolved', 'good') : badge('waiting for an action', 'warn'),
    ' ',
    h('span', { class: 'mono wrap' }, approval.id),
    ' · for ',
    approverName(approval),
    ' · schema ',
    h('span', { class: 'mono' }, approval.schemaId),
    ' · modified ',
    time(approval.lastModified),
  ];
}

/** The approval as the connector's template renders it (when it published one), its data, and its history. */
function dataPanel(detail: ApprovalDetail, current: SystemView): HTMLElement {
  const { approval } = detail;
  const template = templateFor(current.templates, approval.schemaId);
  const rendered = template === undefined ? undefined : renderTemplate(template.template, approval);
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'data-title' },
    h('h2', { id: 'data-title' }, 'The approval'),
    rendered === undefined
      ? h(
          'p',
          { class: 'muted small' },
          'The connector published no template the console can render for this schema.',
        )
      : [h('p', { class: 'muted small' }, `As its “${template?.type}” template shows it`), rendered],
    jsonTree(approval.data ?? {}, rendered === undefined ? 1 : 0, 'data'),
    history(detail),
  );
}

/**
 * One task of the approval: its status, type and id, its deliveries and result, the traces of its creation and of
 * its result (to find them in the tracing backend from what an approver saw), and its timeline.
 */
function taskArticle(task: ApprovalDetail['tasks'][number]): HTMLElement {
  return h(
    'article',
    { class: 'panel task', 'data-task-id': task.id, 'aria-label': `Task ${task.type} ${task.id}` },
    h(
      'h3',
      {},
      h('span', { class: 'task-status' }, taskStatus(task)),
      ' ',
      task.type,
      ' ',
      h('span', { class: 'mono muted small wrap' }, task.id),
    ),
    h(
      'p',
      { class: 'small' },
      `${task.deliveries} deliver${task.deliveries === 1 ? 'y' : 'ies'}`,
      task.encrypted ? ' · credentials sealed' : '',
      ' · result ',
      h('span', { class: 'task-result' }, taskResult(task)),
    ),
    traces(task),
    timeline(task),
  );
}

/** The W3C trace ids the task remembers, each where it was recorded; nothing when it has none. */
function traces(task: ApprovalDetail['tasks'][number]): HTMLElement | string {
  const ids: [string, string | undefined, string][] = [
    ['created in trace', task.createdTraceId, 'task-trace-created'],
    ['result in trace', task.resultTraceId, 'task-trace-result'],
  ];
  const known = ids.filter(([, id]) => id !== undefined);
  if (known.length === 0) return '';
  return h(
    'p',
    { class: 'small muted' },
    known.flatMap(([label, id, name], index) => [
      index === 0 ? '' : ' · ',
      `${label} `,
      h('span', { class: `mono wrap ${name}`, title: 'W3C trace id' }, id ?? ''),
    ]),
  );
}

function history({ approval }: ApprovalDetail): HTMLElement {
  return h(
    'details',
    { class: 'history' },
    h(
      'summary',
      {},
      `lastModified history (${approval.history.length} write${approval.history.length === 1 ? '' : 's'})`,
    ),
    approval.history.length === 0
      ? h(
          'p',
          { class: 'muted' },
          'No write since the backend started (the approval came from a seed or an earlier run).',
        )
      : h(
          'ol',
          {},
          approval.history.map((write) =>
            h(
              'li',
              {},
              write.lastModified === undefined ? 'no lastModified' : time(write.lastModified),
              ' ',
              write.applied ? badge('applied', 'good') : badge('ignored: not newer', 'warn'),
              h('span', { class: 'muted' }, ' received ', time(write.at)),
            ),
          ),
        ),
  );
}
