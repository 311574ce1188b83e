/**
 * The demo approver of `npm start`: once the first approvals of a system are in the service, it acts as one of their
 * approvers would in the console (an approve task, the approver's sign-in sealed to the connector's public key), waits
 * for the connector's result, checks the decision in the simulated source, and says so in one line.
 * @module
 */
import { sealCredentials } from '../../src/api/index.js';
import type { ReferenceBackend } from '../../src/backend/index.js';
import { sleep } from '../../src/internal/wait.js';
import type { PendingApproval, SimulatedSource } from './sources.js';

/** How often the demo approver looks at the service and the source. */
const LOOK_EVERY_MS = 250;
/** Approvals tried before it gives up: one decided in the source meanwhile is not carried out, and another is tried. */
const ATTEMPTS = 3;

/** Options of {@link demoApprove}. */
export interface DemoApproverOptions {
  backend: ReferenceBackend;
  /** The source's system in the backend. */
  systemId: string;
  source: SimulatedSource;
  /** Where its lines go. */
  print(line: string): void;
  /** Ends it, wherever it is. */
  signal: AbortSignal;
}

/**
 * Approves one approval of the source through the service, as its approver; resolves once it has said how that
 * went, or when the signal aborts.
 */
export async function demoApprove(options: DemoApproverOptions): Promise<void> {
  const { source, print, signal } = options;
  try {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const outcome = await approveOne(options);
      if (outcome === 'approved') return;
      print(`${source.label}: ${outcome}${attempt < ATTEMPTS ? '; trying another approval' : ''}`);
    }
    print(
      `${source.label}: the demo approver gave up after ${ATTEMPTS} approvals; approve one in the console`,
    );
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

/** One approval approved through the service: `'approved'`, or what went otherwise. */
async function approveOne({
  backend,
  systemId,
  source,
  print,
  signal,
}: DemoApproverOptions): Promise<string> {
  const { approval, publicKey } = await until(signal, () => {
    const key = backend.getConnector(systemId).publicKey;
    const open = new Set(
      backend
        .listApprovals(systemId)
        .filter(({ resolved }) => !resolved)
        .map(({ id }) => id),
    );
    const candidate = source.pending().find(({ approvalId }) => open.has(approvalId));
    return key === undefined || candidate === undefined ? undefined : { approval: candidate, publicKey: key };
  });
  const task = backend.createTask({
    systemId,
    type: 'approve',
    approvalId: approval.approvalId,
    // Sealed here, as the console seals them in the browser: the backend holds only the ciphertext.
    sealedCredentials: sealCredentials(approval.credentials, publicKey),
  });
  const result = await until(signal, () => backend.getTask(task.id)?.result);
  if (result.status !== 'success') {
    const why = result.meta?.message ?? result.status;
    return `${approval.name}: the task ended ${result.status} (${why})`;
  }
  if (!approval.approvedInSource()) {
    return `${approval.name}: the task succeeded, but the simulated ${source.label} holds no approval by ${approval.approver}`;
  }
  print(describe(source, approval));
  return 'approved';
}

function describe(source: SimulatedSource, approval: PendingApproval): string {
  return `${source.label}: ${approval.name} approved by ${approval.approver} in the simulated ${source.label} (task succeeded)`;
}

/** The first value `look` answers other than `undefined`, looking again every {@link LOOK_EVERY_MS}. */
async function until<T>(signal: AbortSignal, look: () => T | undefined): Promise<T> {
  for (;;) {
    const value = look();
    if (value !== undefined) return value;
    await sleep(LOOK_EVERY_MS, signal);
  }
}
