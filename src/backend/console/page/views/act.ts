// The sealing code alone, past the api's entry, so that no zod reaches the browser: docs/architecture.md allows it.
import { sealCredentials } from '../../../../api/credentials.js';
import { MAX_COMMENT_CHARS } from '../../limits.js';
import { type ApprovalView, api, type SystemView, type TaskInfo } from '../api.js';
import { fill, h } from '../dom.js';
import { announce } from '../view.js';
import { outcomeOf } from './tasks.js';

/** Whether an approval can be acted on now, and what to say about it. */
export function actionState(
  approval: ApprovalView,
  tasks: readonly TaskInfo[],
): { blocked?: string; note?: string } {
  if (approval.resolved) return { blocked: 'Resolved: there is nothing left to act on.' };
  const running = tasks.find((task) => task.status !== 'completed');
  if (running !== undefined) {
    return { blocked: `The ${running.type} task is on its way (${running.status}): wait for its result.` };
  }
  const last = tasks.at(-1);
  if (last !== undefined && outcomeOf(last) === 'succeeded') {
    return {
      note: `The connector carried the ${last.type} decision to the source; the approval resolves at its next sync.`,
    };
  }
  return {};
}

let forms = 0;

/** The fields of an action form: comments with their count, and the approver's sign-in in the source. */
interface Fields {
  comments: HTMLTextAreaElement;
  count: HTMLElement;
  username: HTMLInputElement;
  password: HTMLInputElement;
}

/**
 * The form to act on one approval: comments, credentials sealed here to the connector's current key when it needs
 * them, and a button per task type. It stays in place across live updates (what is typed survives); `update`
 * guards it: no action on a resolved approval, nor beside a task still on its way.
 */
export function actionForm(
  systemId: string,
  approvalId: string,
): {
  element: HTMLElement;
  update(overview: SystemView, approval: ApprovalView, tasks: readonly TaskInfo[]): void;
} {
  const n = ++forms;
  const element = h('div', { class: 'act' });
  const state = h('p', { class: 'form-status notice', 'aria-live': 'polite' });
  const outcome = h('p', { class: 'form-status', role: 'status', tabindex: -1 });
  const demo = h('p', { class: 'demo' });
  let built = '';
  let fields: Fields | undefined;
  let buttons: HTMLButtonElement[] = [];
  let blocked: string | undefined;
  let busy = false;

  const setEnabled = () => {
    for (const button of buttons) button.disabled = busy || blocked !== undefined;
    for (const field of element.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input, textarea')) {
      field.disabled = blocked !== undefined;
    }
  };

  const onSubmit = (event: Event, form: Fields, authRequired: boolean, defaultType: string) => {
    event.preventDefault();
    const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null;
    const type = submitter?.value ?? defaultType;
    busy = true;
    setEnabled();
    outcome.textContent = '';
    createTask(systemId, approvalId, type, form, authRequired)
      .then((task) => {
        form.password.value = '';
        outcome.textContent = `Created the ${type} task; its progress shows below.`;
        announce(`Created the ${type} task for ${approvalId} (${task.id}).`);
      })
      .catch((error: unknown) => {
        outcome.textContent = error instanceof Error ? error.message : String(error);
      })
      .finally(() => {
        busy = false;
        setEnabled();
        // The buttons were disabled while the task was created: the focus goes to what happened.
        outcome.focus();
      });
  };

  const build = (overview: SystemView) => {
    const { taskTypes, authRequired } = overview.connector;
    if (taskTypes.length === 0) {
      buttons = [];
      fields = undefined;
      fill(
        element,
        h(
          'p',
          { class: 'muted' },
          'The connector has registered no task type yet: there is nothing to do here.',
        ),
      );
      return;
    }
    const form = formFields(n);
    fields = form;
    buttons = taskTypes.map((type) =>
      h('button', { type: 'submit', name: 'type', value: type }, label(type)),
    );
    fill(
      element,
      h(
        'form',
        {
          class: 'actions',
          'aria-label': `Act on ${approvalId}`,
          onsubmit: (event: Event) => onSubmit(event, form, authRequired, taskTypes[0] ?? ''),
        },
        h('label', { for: form.comments.id }, 'Comments'),
        form.comments,
        form.count,
        authRequired ? credentialsFieldset(form, demo) : null,
        state,
        h('div', { class: 'buttons' }, buttons),
        outcome,
      ),
    );
  };

  return {
    element,
    update(overview, approval, tasks) {
      const key = JSON.stringify([overview.connector.taskTypes, overview.connector.authRequired]);
      if (key !== built) {
        built = key;
        build(overview);
      }
      const signIn = overview.demoSignIns.find((candidate) => candidate.approver === approval.approver);
      const shownDemo = signIn === undefined ? '' : `${signIn.username}\n${signIn.password}`;
      if (demo.dataset.shown !== shownDemo) {
        demo.dataset.shown = shownDemo;
        fill(demo, signIn === undefined ? null : demoButton(signIn, () => fields));
      }
      const guard = actionState(approval, tasks);
      blocked = guard.blocked;
      // Only why it is closed: what a finished task means is said beside the approval, once.
      state.textContent = guard.blocked ?? '';
      setEnabled();
    },
  };
}

function formFields(n: number): Fields {
  const comments = h('textarea', {
    id: `comments-${n}`,
    name: 'comments',
    rows: 2,
    maxlength: MAX_COMMENT_CHARS,
  });
  const count = h(
    'p',
    { class: 'muted small', id: `comments-${n}-count` },
    `Up to ${MAX_COMMENT_CHARS} characters.`,
  );
  comments.setAttribute('aria-describedby', count.id);
  comments.addEventListener('input', () => {
    count.textContent = `${comments.value.length} of ${MAX_COMMENT_CHARS} characters.`;
  });
  const username = h('input', {
    id: `username-${n}`,
    name: 'username',
    autocomplete: 'off',
    required: true,
  });
  const password = h('input', {
    id: `password-${n}`,
    name: 'password',
    type: 'password',
    autocomplete: 'off',
    required: true,
  });
  return { comments, count, username, password };
}

function credentialsFieldset({ username, password }: Fields, demo: HTMLElement): HTMLElement {
  return h(
    'fieldset',
    {},
    h('legend', {}, 'The approver’s credentials in the source system'),
    h(
      'p',
      { class: 'muted small' },
      'The connector registered authRequired: it signs in to the source as the approver. ',
      'They are sealed in this browser to the connector’s key; the backend never sees them.',
    ),
    demo,
    h('label', { for: username.id }, 'Username'),
    username,
    h('label', { for: password.id }, 'Password'),
    password,
  );
}

/** The button that fills in an approver's demo sign-in, in the fields the form has when it is pressed. */
function demoButton(
  signIn: { username: string; password: string },
  fields: () => Fields | undefined,
): HTMLElement {
  return h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () => {
        const form = fields();
        if (form !== undefined) {
          form.username.value = signIn.username;
          form.password.value = signIn.password;
        }
        announce(`Filled in the demo sign-in of ${signIn.username}.`);
      },
    },
    `Fill in ${signIn.username}’s demo sign-in`,
  );
}

/** Creates the task, its credentials sealed in this browser when the connector registered `authRequired`. */
async function createTask(
  systemId: string,
  approvalId: string,
  type: string,
  { comments, username, password }: Fields,
  authRequired: boolean,
): Promise<TaskInfo> {
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
}

export function label(type: string): string {
  return type.charAt(0).toUpperCase() + type.slice(1);
}
