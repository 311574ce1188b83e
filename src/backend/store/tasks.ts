import { randomUUID } from 'node:crypto';
import { EncryptedCredentials, isPublicKey, sealCredentials, type TaskResult } from '../../api/index.js';
import { toIssues, type ValidationIssue } from '../../errors.js';
import { activeTraceIds } from '../../internal/tracing.js';
import { ServiceError } from '../errors.js';
import type { Approvals } from './approvals.js';
import type { ConnectorRecord, Connectors } from './connectors.js';
import { iso, type StoreContext } from './context.js';

/** Where a task is in its life: waiting to be handed out, leased to a connector, or completed by a result. */
export type TaskStatus = 'waiting' | 'leased' | 'completed';

/** What the backend knows about a task: more than the wire shows. */
export interface TaskInfo {
  id: string;
  systemId: string;
  type: string;
  approvalId: string;
  approveComments: string;
  status: TaskStatus;
  /** How many times Get task has handed it out. */
  deliveries: number;
  createdAt: string;
  /** When the current lease ends; present while leased. */
  leaseExpiresAt?: string;
  /** Whether the task carries sealed credentials. */
  encrypted: boolean;
  /** The result the connector reported; present once completed. */
  result?: TaskResult;
  completedAt?: string;
  /**
   * The W3C trace id of the request that created the task (its `traceparent`), where it carried one or the backend
   * traced it; of an in-process creation, the active OpenTelemetry span's.
   */
  createdTraceId?: string;
  /** The W3C trace id of the request that reported the result: the connector's trace of the task. */
  resultTraceId?: string;
}

export interface NewTask {
  systemId: string;
  /** One of the task types the system's connector registered. */
  type: string;
  /** An approval of the system. */
  approvalId: string;
  /** @default '' */
  approveComments?: string;
  /**
   * The approver's credentials in plain form, sealed to the connector's current key when the connector registered
   * `authRequired: true` (required then) and ignored otherwise, so plain secrets are never stored.
   */
  credentials?: Record<string, unknown>;
  /**
   * The approver's credentials already sealed by the caller (the console seals them in the browser), instead of
   * `credentials`: stored as they are, so the backend never holds them in plain form. They must be sealed to the
   * connector's current key.
   */
  sealedCredentials?: EncryptedCredentials;
}

/** A task as Get task answers it. */
export interface WireTask {
  id: string;
  type: string;
  data: { approval: Record<string, unknown>; approveComments: string; credentials?: EncryptedCredentials };
}

interface Row {
  id: string;
  systemId: string;
  type: string;
  approvalId: string;
  approveComments: string;
  credentials: string | null;
  state: TaskStatus;
  availableAt: number;
  deliveries: number;
  createdAt: number;
  result: string | null;
  completedAt: number | null;
  createdTraceId: string | null;
  resultTraceId: string | null;
}

const FIELDS = `id, system_id AS systemId, type, approval_id AS approvalId, approve_comments AS approveComments,
  credentials, state, available_at AS availableAt, deliveries, created_at AS createdAt, result,
  completed_at AS completedAt, created_trace_id AS createdTraceId, result_trace_id AS resultTraceId`;
const COLUMNS = `${FIELDS} FROM tasks`;

/**
 * Returns to the queue the tasks of a system whose lease has ended, found by the lease's end through tasks_by_state:
 * the leases still running are not read. Each ended lease is returned once, so Get task pays for it once.
 */
const RETURN_ENDED_LEASES = `UPDATE tasks INDEXED BY tasks_by_state SET state = 'waiting'
  WHERE system_id = ? AND state = 'leased' AND available_at <= ?`;

/**
 * The oldest task of a system that can be handed out, read from the front of the partial index tasks_waiting: the
 * pick passes no leased task and sorts nothing. The WHERE repeats the index's condition word for word, which is how
 * SQLite knows the index applies; INDEXED BY keeps the planner from trading it for a sort when statistics tempt it,
 * and makes the statement fail, not slow down, should the index ever go.
 */
const LEASE_QUERY = `SELECT ${FIELDS} FROM tasks INDEXED BY tasks_waiting
  WHERE system_id = ? AND state = 'waiting' AND available_at <= ? ORDER BY seq LIMIT 1`;

export class Tasks {
  constructor(
    private readonly ctx: StoreContext,
    private readonly approvals: Approvals,
    private readonly connectors: Connectors,
  ) {}

  /**
   * Creates a waiting task, refusing one the connector could not run. It remembers `traceId`, by default the active
   * span's trace.
   */
  create(input: NewTask, traceId: string | undefined = activeTraceIds()?.trace_id): TaskInfo {
    const connector = this.connectors.get(input.systemId);
    if (!connector.taskTypes.includes(input.type)) {
      throw ServiceError.conflict(
        `the connector of system ${input.systemId} has not registered task type ${input.type}`,
      );
    }
    if (this.approvals.find(input.systemId, input.approvalId, 'shallow') === undefined) {
      throw ServiceError.notFound('approvals', input.approvalId);
    }
    const now = this.ctx.now();
    const sealed = connector.authRequired ? sealedFor(connector, input, now) : undefined;
    const id = randomUUID();
    this.ctx.db.run(
      `INSERT INTO tasks (id, system_id, type, approval_id, approve_comments, credentials, state, available_at, created_at,
         created_trace_id)
       VALUES (?, ?, ?, ?, ?, ?, 'waiting', ?, ?, ?)`,
      id,
      input.systemId,
      input.type,
      input.approvalId,
      input.approveComments ?? '',
      sealed === undefined ? null : JSON.stringify(sealed),
      now,
      now,
      traceId ?? null,
    );
    this.ctx.changed({
      kind: 'task',
      systemId: input.systemId,
      taskId: id,
      event: { type: 'created', at: iso(now) },
    });
    return this.info(id) as TaskInfo;
  }

  /**
   * Get task: leases the oldest task that waits or whose lease has ended. With `hold: false` the task is handed
   * out without a lease, so the next Get task delivers it again (the duplicate-delivery fault).
   */
  lease(systemId: string, leaseMs: number, hold = true): WireTask | null {
    const now = this.ctx.now();
    this.ctx.db.run(RETURN_ENDED_LEASES, systemId, now);
    const row = this.ctx.db.get<Row>(LEASE_QUERY, systemId, now);
    if (row === undefined) return null;
    this.ctx.db.run(
      "UPDATE tasks SET state = 'leased', available_at = ?, deliveries = deliveries + 1 WHERE id = ?",
      hold ? now + leaseMs : now,
      row.id,
    );
    this.ctx.changed(() => ({
      kind: 'task',
      systemId,
      taskId: row.id,
      event: {
        type: 'delivered',
        at: iso(now),
        delivery: row.deliveries + 1,
        ...(hold ? { leaseExpiresAt: iso(now + leaseMs) } : {}),
      },
    }));
    const approval = this.approvals.find(systemId, row.approvalId, 'full');
    const task: WireTask = {
      id: row.id,
      type: row.type,
      data: { approval: { ...approval }, approveComments: row.approveComments },
    };
    if (row.credentials !== null) task.data.credentials = JSON.parse(row.credentials) as EncryptedCredentials;
    return task;
  }

  /**
   * Update task result: completes the task, also after its lease ended, unless a result came first. It remembers
   * `traceId`, the trace of the request that reported it.
   */
  complete(systemId: string, taskId: string, result: TaskResult, traceId?: string): void {
    const row = this.#row(taskId);
    if (row === undefined || row.systemId !== systemId) throw ServiceError.notFound('tasks', taskId);
    if (row.state === 'completed') throw ServiceError.conflict(`task ${taskId} is already completed`);
    const now = this.ctx.now();
    this.ctx.db.run(
      "UPDATE tasks SET state = 'completed', result = ?, completed_at = ?, result_trace_id = ? WHERE id = ?",
      JSON.stringify(result),
      now,
      traceId ?? null,
      taskId,
    );
    this.ctx.changed({
      kind: 'task',
      systemId,
      taskId,
      event: { type: 'completed', at: iso(now), resultStatus: result.status },
    });
  }

  /** Ends leases now, so the tasks are offered again: one task, a system's, or every one. */
  expireLeases(filter: { taskId?: string; systemId?: string } = {}): number {
    const where = ["state = 'leased'"];
    const params: string[] = [];
    if (filter.taskId !== undefined) {
      where.push('id = ?');
      params.push(filter.taskId);
    }
    if (filter.systemId !== undefined) {
      where.push('system_id = ?');
      params.push(filter.systemId);
    }
    const now = this.ctx.now();
    const ended = this.ctx.db.all<{ id: string; systemId: string }>(
      `SELECT id, system_id AS systemId FROM tasks WHERE ${where.join(' AND ')} AND available_at > ?`,
      ...params,
      now,
    );
    if (ended.length === 0) return 0;
    this.ctx.db.run(
      `UPDATE tasks SET available_at = ? WHERE ${where.join(' AND ')} AND available_at > ?`,
      now,
      ...params,
      now,
    );
    for (const task of ended) {
      this.ctx.changed({
        kind: 'task',
        systemId: task.systemId,
        taskId: task.id,
        event: { type: 'leaseEnded', at: iso(now) },
      });
    }
    return ended.length;
  }

  info(taskId: string): TaskInfo | undefined {
    const row = this.#row(taskId);
    if (row === undefined) return undefined;
    const now = this.ctx.now();
    const leased = row.state === 'leased' && row.availableAt > now;
    const info: TaskInfo = {
      id: row.id,
      systemId: row.systemId,
      type: row.type,
      approvalId: row.approvalId,
      approveComments: row.approveComments,
      status: row.state === 'completed' ? 'completed' : leased ? 'leased' : 'waiting',
      deliveries: row.deliveries,
      createdAt: iso(row.createdAt),
      encrypted: row.credentials !== null,
    };
    if (leased) info.leaseExpiresAt = iso(row.availableAt);
    if (row.result !== null) info.result = JSON.parse(row.result) as TaskResult;
    if (row.completedAt !== null) info.completedAt = iso(row.completedAt);
    if (row.createdTraceId !== null) info.createdTraceId = row.createdTraceId;
    if (row.resultTraceId !== null) info.resultTraceId = row.resultTraceId;
    return info;
  }

  list(systemId: string): TaskInfo[] {
    return this.ctx.db
      .all<{ id: string }>('SELECT id FROM tasks WHERE system_id = ? ORDER BY seq', systemId)
      .map((row) => this.info(row.id) as TaskInfo);
  }

  /** The tasks of one approval, oldest first. */
  listByApproval(systemId: string, approvalId: string): TaskInfo[] {
    return this.ctx.db
      .all<{ id: string }>(
        'SELECT id FROM tasks INDEXED BY tasks_by_approval WHERE system_id = ? AND approval_id = ? ORDER BY seq',
        systemId,
        approvalId,
      )
      .map((row) => this.info(row.id) as TaskInfo);
  }

  #row(taskId: string): Row | undefined {
    return this.ctx.db.get<Row>(`SELECT ${COLUMNS} WHERE id = ?`, taskId);
  }
}

/**
 * The credentials a task for a connector that registered `authRequired` carries, sealed to its current key: sealed
 * here from plain ones, or sealed by the caller and checked. Refuses a task when the key has expired, and a task
 * with neither or both.
 */
function sealedFor(connector: ConnectorRecord, input: NewTask, now: number): EncryptedCredentials {
  const expiresAt = connector.publicKeyExpiredAt === undefined ? 0 : Date.parse(connector.publicKeyExpiredAt);
  if (connector.publicKey === undefined || expiresAt <= now) {
    throw ServiceError.conflict(`the public key of the connector of system ${input.systemId} has expired`);
  }
  if (input.credentials !== undefined && input.sealedCredentials !== undefined) {
    throw ServiceError.invalid([
      { path: ['sealedCredentials'], message: 'comes instead of credentials, not with them', code: 'custom' },
    ]);
  }
  if (input.sealedCredentials !== undefined) return checkSealed(input.sealedCredentials, connector.publicKey);
  if (input.credentials !== undefined) return sealCredentials(input.credentials, connector.publicKey);
  throw ServiceError.invalid([
    {
      path: ['credentials'],
      message: 'is required: the connector registered authRequired',
      code: 'invalid_type',
    },
  ]);
}

/**
 * Credentials a caller sealed, checked as far as a service can without opening them: the contract's format, sealed to
 * the connector's current key (a task sealed to another key might never be opened), from a valid one-time key.
 */
function checkSealed(input: unknown, currentKey: string): EncryptedCredentials {
  const parsed = EncryptedCredentials.safeParse(input);
  if (!parsed.success) {
    throw ServiceError.invalid(
      toIssues(parsed.error).map((issue) => ({ ...issue, path: ['sealedCredentials', ...issue.path] })),
    );
  }
  const { algorithm, publicKey, ephemeralPublicKey, nonce, ciphertext } = parsed.data;
  const problems: ValidationIssue[] = [];
  if (!isPublicKey(ephemeralPublicKey)) {
    problems.push({
      path: ['ephemeralPublicKey'],
      message: 'must be a 32-byte x25519 key in standard base64',
      code: 'invalid_format',
    });
  }
  if (base64Length(nonce) !== NONCE_BYTES) {
    problems.push({
      path: ['nonce'],
      message: `must be ${NONCE_BYTES} bytes in standard base64`,
      code: 'invalid_format',
    });
  }
  if ((base64Length(ciphertext) ?? 0) <= BOX_OVERHEAD_BYTES) {
    problems.push({
      path: ['ciphertext'],
      message: 'must be a sealed box in standard base64',
      code: 'invalid_format',
    });
  }
  if (problems.length > 0) {
    throw ServiceError.invalid(
      problems.map((problem) => ({ ...problem, path: ['sealedCredentials', ...problem.path] })),
    );
  }
  if (publicKey !== currentKey) {
    throw ServiceError.conflict(
      "sealedCredentials: sealed to a key that is not the connector's current one; seal them again to its current key",
    );
  }
  // Only the format's fields are kept: nothing else a caller sent is stored with the task.
  return { algorithm, publicKey, ephemeralPublicKey, nonce, ciphertext };
}

const NONCE_BYTES = 24;
/** What a NaCl box adds to its plaintext: the poly1305 tag. */
const BOX_OVERHEAD_BYTES = 16;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** How many bytes a standard base64 text holds; `undefined` when it is not one. */
function base64Length(text: string): number | undefined {
  if (!BASE64.test(text)) return undefined;
  return (text.length / 4) * 3 - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
}
