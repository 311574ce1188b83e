import { api, ConsoleError } from '../api.js';
import { h } from '../dom.js';

/** The page shown without a session: why, and a form for the admin token. */
export function signInView(reason: string | undefined, signedIn: () => void): HTMLElement {
  const input = h('input', {
    id: 'admin-token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
  });
  const problem = h('p', { class: 'form-status', role: 'alert' });
  const form = h(
    'form',
    {
      class: 'panel sign-in',
      onsubmit: (event: Event) => {
        event.preventDefault();
        problem.textContent = '';
        api.signIn(input.value).then(signedIn, (error: unknown) => {
          problem.textContent =
            error instanceof ConsoleError && error.status === 401
              ? 'That is not the admin token.'
              : String(error instanceof Error ? error.message : error);
        });
      },
    },
    h('h1', {}, 'Sign in to the console'),
    reason === undefined ? null : h('p', { class: 'notice notice-warn' }, reason),
    h(
      'p',
      { class: 'sign-in-how' },
      'A login link works once. Sign in with the admin token instead: the one the command that runs the backend ',
      '(npm run dev, npm start or connector backend) printed when it started, or the value of APPROVAL_ADMIN_TOKEN. ',
      'Or restart that command: it prints a new link.',
    ),
    h('label', { for: 'admin-token' }, 'Admin token'),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
    problem,
  );
  return h('main', { id: 'main' }, form);
}
