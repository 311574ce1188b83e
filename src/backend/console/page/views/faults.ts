import { api, type FaultInfo, type FaultRuleInput } from '../api.js';
import { badge, type Child, fill, h } from '../dom.js';
import { announce, errorMessage, pageTitle, touches, type View } from '../view.js';

/** A fault that stays on until switched off (in practice: it never runs out). */
const UNTIL_OFF = Number.MAX_SAFE_INTEGER;
const METHODS = ['', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

interface Preset {
  id: string;
  name: string;
  what: string;
  method: (typeof METHODS)[number];
  path: string;
  fault: FaultRuleInput['fault'];
  /** A number the switch lets one set: the status, or the Retry-After. */
  number?: { label: string; key: 'status' | 'retryAfter'; min: number; max: number };
}

/** The switches: the faults a connector must survive, each on the requests it hurts most by default. */
const PRESETS: readonly Preset[] = [
  {
    id: 'rate-limit',
    name: 'Rate limit (429 with Retry-After)',
    what: 'Answers 429 with a Retry-After header, doing nothing.',
    method: '',
    path: '/v2/*',
    fault: { type: 'status', status: 429, retryAfter: 1 },
    number: { label: 'Retry-After (seconds)', key: 'retryAfter', min: 0, max: 3600 },
  },
  {
    id: 'server-error',
    name: 'Server error (5xx)',
    what: 'Answers this status, doing nothing.',
    method: '',
    path: '/v2/*',
    fault: { type: 'status', status: 503 },
    number: { label: 'Status', key: 'status', min: 500, max: 599 },
  },
  {
    id: 'drop',
    name: 'Dropped connections',
    what: 'Closes the connection before doing anything.',
    method: '',
    path: '/v2/*',
    fault: { type: 'drop' },
  },
  {
    id: 'drop-answer',
    name: 'Dropped answers',
    what: 'Does what was asked and commits it, then closes the connection unanswered.',
    method: 'PUT',
    path: '/v2/rawapprovals',
    fault: { type: 'dropAnswer' },
  },
  {
    id: 'lost-ack',
    name: 'Lost acknowledgements',
    what: 'Stores a task’s result, then loses the answer: the connector reports it again.',
    method: 'PATCH',
    path: '/v2/connector/tasks/:taskId',
    fault: { type: 'dropAnswer' },
  },
  {
    id: 'duplicate',
    name: 'Duplicate delivery',
    what: 'Hands a task out without a lease, so the next Get task delivers it again.',
    method: 'GET',
    path: '/v2/connector/tasks',
    fault: { type: 'duplicateTask' },
  },
];

/** The fault switches, the faults in force, and a button that ends every lease now. */
export function faultsView(): View {
  const active = h('div', {});
  const systems = new Map<string, string>();
  const switches = PRESETS.map((preset) => faultSwitch(preset, systems));
  const element = h(
    'section',
    { 'aria-labelledby': 'faults-title' },
    h('h1', { id: 'faults-title' }, 'Faults'),
    h(
      'p',
      {},
      'Switch a fault on and watch the connector survive it. A fault applies to the v1 and v2 requests that match ',
      'its method and path (',
      h('code', {}, ':name'),
      ' is one segment, ',
      h('code', {}, '*'),
      ' anything), before authentication, until it is switched off or has applied the number of times given. ',
      'Limited to one system, it applies only to the requests its connector makes with its token.',
    ),
    h(
      'div',
      { class: 'switches' },
      switches.map((item) => item.element),
    ),
    leaseExpiry(),
    h('h2', {}, 'In force'),
    active,
  );

  const refresh = async () => {
    try {
      const [faults, organizations] = await Promise.all([
        api.faults(),
        systems.size === 0 ? api.organizations() : Promise.resolve(undefined),
      ]);
      if (organizations !== undefined) {
        for (const org of organizations) {
          for (const system of org.systems) systems.set(system.id, `${system.name} (${org.name})`);
        }
      }
      for (const item of switches) item.show(faults);
      fill(active, faultsInForce(faults, systems, refresh));
    } catch (error) {
      fill(active, errorMessage(error));
    }
  };
  for (const item of switches) item.changed = refresh;

  return {
    element,
    async update(changes) {
      pageTitle('Faults');
      if (touches(changes, ['directory'])) systems.clear();
      if (touches(changes, ['faults', 'directory'])) await refresh();
    },
  };
}

/** The button that ends every lease now, and what it did. */
function leaseExpiry(): HTMLElement {
  const expire = h('p', { class: 'form-status', 'aria-live': 'polite' });
  return h(
    'article',
    { class: 'panel' },
    h('h2', {}, 'Lease expiry'),
    h(
      'p',
      {},
      'Ends every running lease now, so each leased task is offered again, as if its connector had died.',
    ),
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          api.expireLeases().then(
            ({ expired }) => {
              expire.textContent = `${expired} lease${expired === 1 ? '' : 's'} ended.`;
              announce(expire.textContent);
            },
            (error: unknown) => fill(expire, errorMessage(error)),
          );
        },
      },
      'Expire every lease now',
    ),
    expire,
  );
}

/** The faults in force, each with what it does, to which requests, how often so far, and a button to remove it. */
function faultsInForce(
  faults: readonly FaultInfo[],
  systems: ReadonlyMap<string, string>,
  refresh: () => Promise<void>,
): Child {
  if (faults.length === 0) return h('p', { class: 'muted' }, 'No fault: every request is served normally.');
  const item = (fault: FaultInfo) =>
    h(
      'li',
      {},
      badge(describeFault(fault.fault), 'warn'),
      ' ',
      h('span', { class: 'mono' }, `${fault.method ?? 'any method'} ${fault.path ?? 'any path'}`),
      ' ',
      scopeOf(fault, systems),
      ' ',
      h(
        'span',
        { class: 'muted fault-count' },
        `applied ${fault.hits} time${fault.hits === 1 ? '' : 's'}, `,
        fault.remaining >= UNTIL_OFF / 2 ? 'until switched off' : `${fault.remaining} more`,
      ),
      ' ',
      h(
        'button',
        {
          type: 'button',
          class: 'small',
          'aria-label': `Remove fault ${fault.id}`,
          onclick: () => void api.clearFault(fault.id).then(refresh),
        },
        'Remove',
      ),
    );
  return [
    h('ul', { class: 'faults' }, faults.map(item)),
    h(
      'button',
      { type: 'button', onclick: () => void api.clearFaults().then(refresh) },
      'Remove every fault',
    ),
  ];
}

/** Which requests a fault applies to: one system's connector's, or everyone's. */
export function scopeOf(fault: FaultInfo, systems: ReadonlyMap<string, string>): HTMLElement {
  return fault.systemId === undefined
    ? h('span', {}, 'for every system')
    : h('span', {}, 'for ', h('strong', {}, systems.get(fault.systemId) ?? fault.systemId), ' only');
}

export function describeFault(fault: FaultInfo['fault']): string {
  switch (fault.type) {
    case 'status':
      return `${fault.status}${fault.retryAfter === undefined ? '' : `, Retry-After ${fault.retryAfter}`}`;
    case 'delay':
      return `delay ${fault.ms} ms`;
    default:
      return fault.type;
  }
}

/** Whether a fault in force is this switch's: same kind, same requests. */
function matches(preset: Preset, fault: FaultInfo, method: string, path: string, systemId: string): boolean {
  return (
    fault.fault.type === preset.fault.type &&
    (fault.systemId ?? '') === systemId &&
    (fault.method ?? '') === method &&
    (fault.path ?? '') === path &&
    (preset.fault.type !== 'status' ||
      (fault.fault.type === 'status' && (fault.fault.status === 429) === (preset.fault.status === 429)))
  );
}

/** The fields of a fault switch: which requests, how many times, and the preset's number when it has one. */
interface SwitchFields {
  method: HTMLSelectElement;
  path: HTMLInputElement;
  times: HTMLInputElement;
  system: HTMLSelectElement;
  number: HTMLInputElement | undefined;
}

function switchFields(preset: Preset): SwitchFields {
  const id = (name: string) => `${preset.id}-${name}`;
  const method = h(
    'select',
    { id: id('method') },
    METHODS.map((name) => h('option', { value: name }, name || 'any')),
  );
  method.value = preset.method;
  const path = h('input', {
    id: id('path'),
    value: preset.path,
    autocomplete: 'off',
    required: true,
    pattern: '/.*',
    title: 'A path starts with /',
  });
  const times = h('input', { id: id('times'), type: 'number', min: 1, step: 1, placeholder: 'until off' });
  const system = h('select', { id: id('system') }, h('option', { value: '' }, 'every system'));
  const number =
    preset.number === undefined
      ? undefined
      : h('input', {
          id: id('number'),
          type: 'number',
          min: preset.number.min,
          max: preset.number.max,
          value: String((preset.fault as Record<string, unknown>)[preset.number.key]),
          required: true,
        });
  return { method, path, times, system, number };
}

/** The rule a switch adds: the preset's fault, on the requests and as many times as its fields say. */
function ruleOf(preset: Preset, { method, path, times, system, number }: SwitchFields): FaultRuleInput {
  const fault = { ...preset.fault } as Record<string, unknown>;
  if (number !== undefined && preset.number !== undefined) fault[preset.number.key] = Number(number.value);
  return {
    ...(method.value === '' ? {} : { method: method.value as NonNullable<FaultRuleInput['method']> }),
    ...(system.value === '' ? {} : { systemId: system.value }),
    path: path.value,
    times: times.value === '' ? UNTIL_OFF : Number(times.value),
    fault: fault as FaultRuleInput['fault'],
  };
}

function faultSwitch(
  preset: Preset,
  systems: ReadonlyMap<string, string>,
): {
  element: HTMLElement;
  show(faults: FaultInfo[]): void;
  changed: () => Promise<void>;
} {
  const id = (name: string) => `${preset.id}-${name}`;
  const { method, path, times, system, number } = switchFields(preset);
  const toggle = h(
    'button',
    { type: 'button', class: 'switch', 'aria-pressed': 'false', id: id('switch') },
    'Off',
  );
  const problem = h('p', { class: 'form-status', role: 'alert' });
  const inputs = [method, path, times, system, ...(number === undefined ? [] : [number])];
  let mine: FaultInfo[] = [];
  // A real form, so that the fields' required, min and max hold before anything is sent.
  const form = h('form', { class: 'switch-form', 'aria-labelledby': id('title'), novalidate: false });

  const item = {
    element: h('article', { class: 'panel switch-panel', 'aria-labelledby': id('title') }, form),
    show(faults: FaultInfo[]) {
      const chosen = system.value;
      fill(
        system,
        h('option', { value: '' }, 'every system'),
        [...systems].map(([value, name]) => h('option', { value }, name)),
      );
      system.value = systems.has(chosen) ? chosen : '';
      mine = faults.filter((fault) => matches(preset, fault, method.value, path.value, system.value));
      // A fault of this kind in force for one system shows the switch as that system's, on.
      if (mine.length === 0) {
        const scoped = faults.find(
          (fault) =>
            fault.systemId !== undefined && matches(preset, fault, method.value, path.value, fault.systemId),
        );
        if (scoped?.systemId !== undefined && systems.has(scoped.systemId)) {
          system.value = scoped.systemId;
          mine = [scoped];
        }
      }
      const on = mine.length > 0;
      toggle.setAttribute('aria-pressed', String(on));
      toggle.textContent = on ? 'On' : 'Off';
      hits.textContent = on
        ? `Applied ${mine.reduce((sum, fault) => sum + fault.hits, 0)} times so far.`
        : '';
      for (const input of inputs) input.disabled = on;
    },
    changed: async () => {},
  };
  const hits = h('p', { class: 'muted small fault-count', 'aria-live': 'off' });
  form.append(
    h('div', { class: 'switch-head' }, h('h2', { id: id('title') }, preset.name), toggle),
    h('p', { class: 'muted' }, preset.what),
    h(
      'div',
      { class: 'switch-fields' },
      h('div', { class: 'wide' }, h('label', { for: id('system') }, 'For'), system),
      h('div', {}, h('label', { for: id('method') }, 'Method'), method),
      h('div', { class: 'wide' }, h('label', { for: id('path') }, 'Path'), path),
      number === undefined || preset.number === undefined
        ? null
        : h('div', {}, h('label', { for: id('number') }, preset.number.label), number),
      h('div', {}, h('label', { for: id('times') }, 'Times'), times),
    ),
    hits,
    problem,
  );
  toggle.setAttribute('aria-label', `${preset.name}: switch`);
  toggle.type = 'submit';
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    problem.textContent = '';
    const on = mine.length > 0;
    const action = on
      ? Promise.all(mine.map((fault) => api.clearFault(fault.id)))
      : api.injectFault(ruleOf(preset, { method, path, times, system, number }));
    action.then(
      () => {
        announce(`${preset.name} switched ${on ? 'off' : 'on'}.`);
        return item.changed();
      },
      (error: unknown) => {
        problem.textContent = error instanceof Error ? error.message : String(error);
      },
    );
  });
  return item;
}
