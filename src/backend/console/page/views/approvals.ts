// biome-ignore lint/style/noRestrictedImports: the browser's bundle takes the sealing code alone, not the whole wire contract and zod behind the api's entry.
import { sealCredentials } from '../../../../api/credentials.js';
import { type ApprovalView, api, type SystemView, type TaskInfo } from '../api.js';
import { badge, fill, h, jsonTree, time } from '../dom.js';
import { renderTemplate, templateFor } from '../template.js';
import { announce, errorMessage, touches } from '../view.js';
import type { Panel } from './system.js';
import { reloadWhenLeaseEnds, taskResult, taskStatus } from './tasks.js';

const SHOWN = 50;

interface Card {
  element: HTMLElement;
  info: HTMLElement;
  tasks: HTMLElement;
  actions: HTMLElement;
  infoKey: string;
  tasksKey: string;
  actionsKey: string;
}

let headings = 0;

/** A system's approvals, newest first, filtered and searched, each with its tasks and the actions to create more. */
export function approvalsPanel(systemId: string): Panel {
  const search = h('input', { id: 'approval-search', type: 'search', autocomplete: 'off' });
  const show = h(
    'select',
    { id: 'approval-filter' },
    h('option', { value: '' }, 'All'),
    h('option', { value: 'false' }, 'Waiting for an action'),
    h('option', { value: 'true' }, 'Resolved'),
  );
  const summary = h('p', { class: 'muted', 'aria-live': 'polite' });
  const list = h('div', { class: 'approvals' });
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
    list,
  );
  const cards = new Map<string, Card>();
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
          limit: SHOWN,
          search: search.value.trim(),
          ...(show.value === '' ? {} : { resolved: show.value === 'true' }),
        }),
        api.tasks(systemId),
      ]);
      timer = reloadWhenLeaseEnds(tasks, now, () => void load());
      summary.textContent =
        total === 0
          ? 'No approval matches.'
          : `${total} approval${total === 1 ? '' : 's'}${total > approvals.length ? `, the newest ${approvals.length} shown` : ''}, newest first.`;
      const byApproval = Map.groupBy(tasks, (task) => task.approvalId);
      const shown = approvals.map((approval) => {
        const card = cards.get(approval.id) ?? newCard(approval.id);
        cards.set(approval.id, card);
        updateCard(card, approval, byApproval.get(approval.id) ?? [], current, systemId, () => overview);
        return card.element;
      });
      for (const id of cards.keys()) if (!approvals.some((approval) => approval.id === id)) cards.delete(id);
      // Moving an element would take the focus from a form being filled in: only a new order is applied.
      const order = [...list.children];
      if (order.length !== shown.length || order.some((child, index) => child !== shown[index])) {
        list.replaceChildren(...shown);
      }
    } catch (error) {
      fill(summary, errorMessage(error));
    }
  };

  search.addEventListener('input', () => {
    window.clearTimeout(typing);
    typing = window.setTimeout(() => void load(), 250);
  });
  show.addEventListener('change', () => void load());

  return {
    element,
    async update(next, changes) {
      overview = next;
      if (changes !== undefined && !touches(changes, ['approval', 'task'], systemId)) return;
      await load();
    },
    dispose() {
      window.clearTimeout(timer);
      window.clearTimeout(typing);
    },
  };
}

function newCard(approvalId: string): Card {
  const headingId = `approval-${++headings}`;
  const info = h('div', {});
  const tasks = h('div', {});
  const actions = h('div', {});
  const element = h(
    'article',
    { class: 'panel approval', 'aria-labelledby': headingId, 'data-approval-id': approvalId },
    h('h2', { id: headingId, class: 'mono' }, approvalId),
    info,
    tasks,
    actions,
  );
  return { element, info, tasks, actions, infoKey: '', tasksKey: '', actionsKey: '' };
}

/** Rebuilds only the parts of a card that changed, so a comment being typed survives a live update. */
function updateCard(
  card: Card,
  approval: ApprovalView,
  tasks: readonly TaskInfo[],
  overview: SystemView,
  systemId: string,
  latest: () => SystemView | undefined,
): void {
  const template = templateFor(overview.templates, approval.schemaId);
  const infoKey = JSON.stringify([approval, template]);
  if (infoKey !== card.infoKey) {
    card.infoKey = infoKey;
    fill(card.info, approvalInfo(approval, template));
  }
  const tasksKey = JSON.stringify(tasks);
  if (tasksKey !== card.tasksKey) {
    card.tasksKey = tasksKey;
    fill(card.tasks, approvalTasks(tasks));
  }
  const { taskTypes, authRequired } = overview.connector;
  const actionsKey = JSON.stringify([taskTypes, authRequired]);
  if (actionsKey !== card.actionsKey) {
    card.actionsKey = actionsKey;
    fill(card.actions, actionsForm(systemId, approval.id, latest));
  }
}

function approvalInfo(
  approval: ApprovalView,
  template: { type: string; template: Record<string, unknown> } | undefined,
): HTMLElement[] {
  const rendered = template === undefined ? undefined : renderTemplate(template.template, approval);
  return [
    h(
      'p',
      { class: 'approval-meta' },
      approval.resolved ? badge('resolved', 'good') : badge('waiting for an action', 'warn'),
      ' ',
      h('span', {}, 'schema ', h('span', { class: 'mono' }, approval.schemaId)),
      ' · ',
      h('span', {}, 'approver ', h('span', { class: 'mono' }, approval.approver)),
      ' · ',
      h('span', {}, 'last modified ', time(approval.lastModified)),
    ),
    rendered === undefined
      ? jsonTree(approval.data ?? {}, 1, 'data')
      : h(
          'div',
          {},
          h('p', { class: 'muted small' }, `As its “${template?.type}” template shows it`),
          rendered,
          jsonTree(approval.data ?? {}, 0, 'data'),
        ),
    history(approval),
  ];
}

function history(approval: ApprovalView): HTMLElement {
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

function approvalTasks(tasks: readonly TaskInfo[]): HTMLElement | null {
  if (tasks.length === 0) return null;
  return h(
    'ul',
    { class: 'approval-tasks', 'aria-label': `Tasks of this approval` },
    [...tasks]
      .reverse()
      .map((task) =>
        h(
          'li',
          { 'data-task-id': task.id },
          h('span', { class: 'task-type' }, task.type),
          ' ',
          h('span', { class: 'task-status' }, taskStatus(task)),
          ' ',
          h('span', { class: 'muted' }, `${task.deliveries} deliver${task.deliveries === 1 ? 'y' : 'ies'}`),
          ' ',
          h('span', { class: 'task-result' }, taskResult(task)),
        ),
      ),
  );
}

let forms = 0;

/** A button per task type, comments, and credentials sealed here to the connector's current key when it needs them. */
function actionsForm(
  systemId: string,
  approvalId: string,
  latest: () => SystemView | undefined,
): HTMLElement | null {
  const overview = latest();
  if (overview === undefined) return null;
  const { taskTypes, authRequired } = overview.connector;
  if (taskTypes.length === 0) {
    return h(
      'p',
      { class: 'muted' },
      'The connector has registered no task type yet: there is nothing to do here.',
    );
  }
  const n = ++forms;
  const comments = h('textarea', { id: `comments-${n}`, name: 'comments', rows: 2 });
  const username = h('input', { id: `username-${n}`, name: 'username', autocomplete: 'off' });
  const password = h('input', {
    id: `password-${n}`,
    name: 'password',
    type: 'password',
    autocomplete: 'off',
  });
  const outcome = h('p', { class: 'form-status', 'aria-live': 'polite' });
  const buttons = taskTypes.map((type) =>
    h('button', { type: 'submit', name: 'type', value: type }, label(type)),
  );

  const submit = async (type: string) => {
    const body: Parameters<typeof api.createTask>[1] = { type, approvalId, approveComments: comments.value };
    if (authRequired) {
      // Read now, not when the page loaded: the key the connector holds at this moment is the one it opens with.
      const { connector } = await api.system(systemId);
      if (connector.publicKey === undefined) throw new Error('The connector has registered no public key.');
      body.sealedCredentials = sealCredentials(
        { username: username.value, password: password.value },
        connector.publicKey,
      );
    }
    return api.createTask(systemId, body);
  };

  return h(
    'form',
    {
      class: 'actions',
      'aria-label': `Act on ${approvalId}`,
      onsubmit: (event: Event) => {
        event.preventDefault();
        const type =
          ((event as SubmitEvent).submitter as HTMLButtonElement | null)?.value ?? taskTypes[0] ?? '';
        for (const button of buttons) button.disabled = true;
        outcome.textContent = '';
        submit(type)
          .then((task) => {
            password.value = '';
            outcome.textContent = `Created the task “${type}”; its status shows above.`;
            announce(`Created a ${type} task for ${approvalId} (${task.id}).`);
          })
          .catch((error: unknown) => {
            outcome.textContent = error instanceof Error ? error.message : String(error);
          })
          .finally(() => {
            for (const button of buttons) button.disabled = false;
          });
      },
    },
    h('label', { for: `comments-${n}` }, 'Comments'),
    comments,
    authRequired
      ? h(
          'fieldset',
          {},
          h('legend', {}, 'Credentials, sealed in this browser to the connector’s key'),
          h('label', { for: `username-${n}` }, 'Username'),
          username,
          h('label', { for: `password-${n}` }, 'Password'),
          password,
        )
      : null,
    h('div', { class: 'buttons' }, buttons),
    outcome,
  );
}

function label(type: string): string {
  return type.charAt(0).toUpperCase() + type.slice(1);
}
