/**
 * What `npm start` shows of the changes a source pushes: each decision the simulated Jira's or ServiceNow's activity
 * takes in the source itself, and how soon the service holds it resolved, in one line, without waiting for the
 * schedule (a sync run a minute). The service hears of it from the connector's lookup of what Jira's webhook or
 * ServiceNow's business rules named.
 * @module
 */
import type { ReferenceBackend } from '../../src/backend/index.js';
import type { DecidedInSource, SimulatedSource } from './sources.js';

/** How long a decision is waited for in the service before the line says it has not shown yet. */
const GIVE_UP_MS = 90_000;

/** Options of {@link reportPushed}. */
export interface ReportPushedOptions {
  backend: ReferenceBackend;
  /** The source's system in the backend. */
  systemId: string;
  source: SimulatedSource;
  /** Where its lines go. */
  print(line: string): void;
}

/**
 * Prints, for each decision taken in the source itself, when the service holds its approval resolved: `Jira:
 * ITSM-4 approved by Ada Lovelace in the simulated Jira itself, resolved in the service 0.4 s later`, `ServiceNow:
 * CHG0030009 rejected by Tom Becker in the simulated ServiceNow itself, …`. Returns what stops it; a source that does
 * not push gets nothing.
 */
export function reportPushed({ backend, systemId, source, print }: ReportPushedOptions): () => void {
  if (source.onDecidedInSource === undefined) return () => {};
  const waiting = new Map<string, { decision: DecidedInSource; timer: NodeJS.Timeout }>();
  const shown = (approvalId: string) => {
    const entry = waiting.get(approvalId);
    if (entry === undefined) return;
    const held = backend.listApprovals(systemId).find(({ id }) => id === approvalId);
    if (held?.resolved !== true) return;
    clearTimeout(entry.timer);
    waiting.delete(approvalId);
    const seconds = ((Date.now() - entry.decision.at) / 1000).toFixed(1);
    print(`${describe(source, entry.decision)}, resolved in the service ${seconds} s later`);
  };
  const unwatch = backend.watch((change) => {
    if (change.kind === 'approval' && change.systemId === systemId) shown(change.approvalId);
  });
  const unlisten = source.onDecidedInSource((decision) => {
    const timer = setTimeout(() => {
      waiting.delete(decision.approvalId);
      print(`${describe(source, decision)}: not resolved in the service after ${GIVE_UP_MS / 1000} s`);
    }, GIVE_UP_MS).unref();
    waiting.set(decision.approvalId, { decision, timer });
    // Shown already: the service heard of it before the activity's turn ended.
    shown(decision.approvalId);
  });
  return () => {
    unlisten();
    unwatch();
    for (const { timer } of waiting.values()) clearTimeout(timer);
    waiting.clear();
  };
}

function describe(source: SimulatedSource, decision: DecidedInSource): string {
  return `${source.label}: ${decision.name} ${decision.decision} by ${decision.approver} in the simulated ${source.label} itself`;
}
