import { toIssues } from '../../errors.js';
import { ServiceError } from '../errors.js';
import { type FaultAction, type FaultInfo, FaultRule, type FaultRuleInput } from './schema.js';

interface ActiveFault extends FaultInfo {
  pattern: RegExp | undefined;
}

/** What a fault listener hears: a fault added, removed, applied or spent (applied for the last time). */
export type FaultEvent =
  | { type: 'added' | 'removed'; fault: FaultInfo }
  | { type: 'cleared' }
  | { type: 'applied' | 'spent'; fault: FaultInfo; systemId: string | undefined };

export type FaultListener = (event: FaultEvent) => void;

/** Faults to inject into service requests. Empty, and so off, unless a test or the admin API adds some. */
export class FaultInjector {
  #next = 1;
  #faults: ActiveFault[] = [];
  readonly #listeners = new Set<FaultListener>();

  /** Adds a fault for the next `times` matching requests. Throws a 400 {@link ServiceError} for an invalid rule. */
  inject(input: FaultRuleInput): FaultInfo {
    const parsed = FaultRule.safeParse(input);
    if (!parsed.success) throw ServiceError.invalid(toIssues(parsed.error));
    const { times, ...rule } = parsed.data;
    const fault: ActiveFault = {
      ...rule,
      id: this.#next++,
      remaining: times,
      hits: 0,
      pattern: rule.path === undefined ? undefined : compilePattern(rule.path),
    };
    this.#faults.push(fault);
    this.#tell({ type: 'added', fault: describe(fault) });
    return describe(fault);
  }

  list(): FaultInfo[] {
    return this.#faults.map(describe);
  }

  /** Removes one fault, or every fault. */
  clear(id?: number): void {
    if (id === undefined) {
      this.#faults = [];
      this.#tell({ type: 'cleared' });
      return;
    }
    const fault = this.#faults.find((candidate) => candidate.id === id);
    if (fault === undefined) return;
    this.#faults = this.#faults.filter((candidate) => candidate !== fault);
    this.#tell({ type: 'removed', fault: describe(fault) });
  }

  /** Calls `listener` on every change of the faults in force, until the returned function is called. */
  subscribe(listener: FaultListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The action for this request, counting it against the first fault that matches; `undefined` when none does.
   * `duplicateTask` faults match Get task only. `systemOf` names the system whose connector token the request
   * carries; it is asked only when a fault scoped to a system could match.
   */
  take(
    method: string,
    path: string,
    systemOf: () => string | undefined = () => undefined,
  ): FaultAction | undefined {
    let system: { id: string | undefined } | undefined;
    const fault = this.#faults.find((candidate) => {
      if (candidate.method !== undefined && candidate.method !== method) return false;
      if (candidate.pattern !== undefined && !candidate.pattern.test(path)) return false;
      if (candidate.fault.type === 'duplicateTask' && (method !== 'GET' || path !== '/v2/connector/tasks')) {
        return false;
      }
      if (candidate.systemId === undefined) return true;
      system ??= { id: systemOf() };
      return system.id === candidate.systemId;
    });
    if (fault === undefined) return undefined;
    fault.remaining -= 1;
    fault.hits += 1;
    const spent = fault.remaining === 0;
    if (spent) this.#faults = this.#faults.filter((candidate) => candidate !== fault);
    this.#tell({
      type: spent ? 'spent' : 'applied',
      fault: describe(fault),
      systemId: system?.id ?? systemOf(),
    });
    return fault.fault;
  }

  #tell(event: FaultEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A watcher's failure must not change what the request meets.
      }
    }
  }
}

function describe({ pattern: _pattern, ...fault }: ActiveFault): FaultInfo {
  return { ...fault, fault: { ...fault.fault } };
}

function compilePattern(path: string): RegExp {
  const source = path
    .split(/(\*|:[A-Za-z_][A-Za-z0-9_]*)/)
    .map((part) => {
      if (part === '*') return '.*';
      if (part.startsWith(':')) return '[^/]+';
      return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`);
}
