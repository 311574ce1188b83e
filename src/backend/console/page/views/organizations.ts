import { api, type OrganizationView } from '../api.js';
import { fill, h } from '../dom.js';
import { errorMessage, pageTitle, touches, type View } from '../view.js';

/** Organizations with their systems, users and user mappings. */
export function organizationsView(): View {
  const element = h('section', { 'aria-labelledby': 'organizations-title' });
  const body = h('div', {});
  element.append(h('h1', { id: 'organizations-title' }, 'Organizations'), body);

  return {
    element,
    async update(changes) {
      pageTitle('Organizations');
      if (!touches(changes, ['directory'])) return;
      try {
        const organizations = await api.organizations();
        fill(
          body,
          organizations.length === 0
            ? h(
                'p',
                { class: 'notice' },
                'No organization yet: start the backend with --seed, or create a tenant.',
              )
            : organizations.map(organization),
        );
      } catch (error) {
        fill(body, errorMessage(error));
      }
    },
  };
}

function organization(org: OrganizationView): HTMLElement {
  const emails = new Map(org.users.map((user) => [user.id, user.email]));
  return h(
    'article',
    { class: 'panel' },
    h('h2', {}, org.name, ' ', h('span', { class: 'muted mono' }, org.id)),
    h('h3', {}, 'Systems'),
    org.systems.length === 0
      ? h('p', { class: 'muted' }, 'No system.')
      : h(
          'ul',
          { class: 'systems' },
          org.systems.map((system) =>
            h(
              'li',
              {},
              h('a', { href: `#/systems/${encodeURIComponent(system.id)}/approvals` }, system.name),
              ' ',
              h('span', { class: 'muted mono' }, system.id),
            ),
          ),
        ),
    h('h3', {}, 'Users'),
    org.users.length === 0
      ? h('p', { class: 'muted' }, 'No user.')
      : table(
          ['Name', 'Email', 'Id'],
          org.users.map((user) => [`${user.firstName} ${user.lastName}`, user.email, mono(user.id)]),
        ),
    h('h3', {}, 'User mappings'),
    org.systems.every((system) => system.mappings.length === 0)
      ? h('p', { class: 'muted' }, 'No user mapping.')
      : table(
          ['System', 'User', 'Id in the system'],
          org.systems.flatMap((system) =>
            system.mappings.map((mapping) => [
              system.name,
              emails.get(mapping.userId) ?? mapping.userId,
              mono(mapping.systemUserId),
            ]),
          ),
        ),
  );
}

function mono(text: string): HTMLElement {
  return h('span', { class: 'mono' }, text);
}

export function table(
  headings: readonly string[],
  rows: readonly (readonly (Node | string)[])[],
): HTMLElement {
  return h(
    'div',
    { class: 'table-scroll' },
    h(
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
        rows.map((row) =>
          h(
            'tr',
            {},
            row.map((cell, index) => h('td', { 'data-label': headings[index] ?? '' }, cell)),
          ),
        ),
      ),
    ),
  );
}
