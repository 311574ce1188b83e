import { toIssues } from '../../errors.js';
import { ServiceError } from '../errors.js';
import { type FaultAction, type FaultInfo, FaultRule, type FaultRuleInput } from './schema.js';

interface ActiveFault extends FaultInfo {
  pattern: RegExp | undefined;
}

/** Faults to inject into service requests. Empty, and so off, unless a test or the admin API adds some. */
export class FaultInjector {
  #next = 1;
  #faults: ActiveFault[] = [];

  /** Adds a fault for the next `times` matching requests. Throws a 400 {@link ServiceError} for an invalid rule. */
  inject(input: FaultRuleInput): FaultInfo {
    const parsed = FaultRule.safeParse(input);
    if (!parsed.success) throw ServiceError.invalid(toIssues(parsed.error));
    const { times, ...rule } = parsed.data;
    const fault: ActiveFault = {
      ...rule,
      id: this.#next++,
      remaining: times,
      pattern: rule.path === undefined ? undefined : compilePattern(rule.path),
    };
    this.#faults.push(fault);
    return describe(fault);
  }

  list(): FaultInfo[] {
    return this.#faults.map(describe);
  }

  /** Removes one fault, or every fault. */
  clear(id?: number): void {
    this.#faults = id === undefined ? [] : this.#faults.filter((fault) => fault.id !== id);
  }

  /**
   * The action for this request, counting it against the first fault that matches; `undefined` when none does.
   * `duplicateTask` faults match Get task only.
   */
  take(method: string, path: string): FaultAction | undefined {
    const fault = this.#faults.find(
      (candidate) =>
        (candidate.method === undefined || candidate.method === method) &&
        (candidate.pattern === undefined || candidate.pattern.test(path)) &&
        (candidate.fault.type !== 'duplicateTask' || (method === 'GET' && path === '/v2/connector/tasks')),
    );
    if (fault === undefined) return undefined;
    fault.remaining -= 1;
    if (fault.remaining === 0) this.#faults = this.#faults.filter((candidate) => candidate !== fault);
    return fault.fault;
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
