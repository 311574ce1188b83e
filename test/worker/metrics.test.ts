import { register as globalRegistry, Registry } from 'prom-client';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { ConnectorMetrics } from '../../src/worker/index.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');

/** The value of one sample line of the rendered text, by its name and labels as printed. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('ConnectorMetrics', () => {
  it('renders every metric with its type, at its initial value', async () => {
    const { contentType, body } = await new ConnectorMetrics().render();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(body).toContain('# TYPE approval_connector_approvals_pushed_total counter');
    expect(body).toContain('# TYPE approval_connector_sync_runs_total counter');
    expect(body).toContain('# TYPE approval_connector_sync_lag_seconds gauge');
    expect(body).toContain('# TYPE approval_connector_tasks_total counter');
    expect(body).toContain('# TYPE approval_connector_task_duration_seconds histogram');
    expect(body).toContain('# TYPE approval_connector_poll_errors_total counter');
    expect(body).toContain('# TYPE approval_connector_key_expiry_seconds gauge');
    expect(body).toContain('# TYPE approval_connector_key_events_total counter');
    expect(body).toContain('# TYPE approval_connector_ready gauge');
    expect(sample(body, 'approval_connector_approvals_pushed_total')).toBe(0);
    expect(sample(body, 'approval_connector_poll_errors_total')).toBe(0);
    expect(sample(body, 'approval_connector_ready')).toBe(0);
    for (const event of ['created', 'rotated', 'adopted', 'expiring', 'expired']) {
      expect(sample(body, `approval_connector_key_events_total{event="${event}"}`)).toBe(0);
    }
    // Unknown until recorded: absent, not a reassuring 0.
    expect(sample(body, 'approval_connector_sync_lag_seconds')).toBeUndefined();
    expect(sample(body, 'approval_connector_key_expiry_seconds')).toBeUndefined();
    for (const stall of ['sync_cursor_age_seconds', 'sync_cursor_frozen', 'lease_age_seconds']) {
      expect(body).toContain(`# TYPE approval_connector_${stall} gauge`);
      expect(sample(body, `approval_connector_${stall}`)).toBeUndefined();
    }
    expect(body).toContain('# TYPE approval_connector_sync_consecutive_failures gauge');
    expect(body).not.toMatch(/^approval_connector_sync_consecutive_failures/m);
  });

  it('reads the stall gauges at each scrape from the parts that know them, absent where a part reads nothing', async () => {
    const metrics = new ConnectorMetrics();
    let cursor: { ageMs: number; frozen: boolean } | undefined = { ageMs: 90_000, frozen: false };
    let leaseAgeMs: number | undefined = 2_500;
    metrics.readStalls({
      syncFailuresInARow: () =>
        new Map([
          ['incremental', 3],
          ['lookup', 0],
        ] as const),
      cursor: () => cursor,
      leaseAgeMs: () => leaseAgeMs,
    });
    let { body } = await metrics.render();
    expect(sample(body, 'approval_connector_sync_consecutive_failures{mode="incremental"}')).toBe(3);
    expect(sample(body, 'approval_connector_sync_consecutive_failures{mode="lookup"}')).toBe(0);
    expect(sample(body, 'approval_connector_sync_cursor_age_seconds')).toBe(90);
    expect(sample(body, 'approval_connector_sync_cursor_frozen')).toBe(0);
    expect(sample(body, 'approval_connector_lease_age_seconds')).toBe(2.5);

    cursor = { ageMs: 4_000_000, frozen: true };
    leaseAgeMs = undefined;
    ({ body } = await metrics.render());
    expect(sample(body, 'approval_connector_sync_cursor_age_seconds')).toBe(4_000);
    expect(sample(body, 'approval_connector_sync_cursor_frozen')).toBe(1);
    expect(sample(body, 'approval_connector_lease_age_seconds')).toBeUndefined();
  });

  it('renders the other metrics when a stall reading throws, leaving its gauge absent', async () => {
    const metrics = new ConnectorMetrics();
    metrics.readStalls({
      syncFailuresInARow: () => new Map(),
      cursor: () => {
        throw new Error('a bug');
      },
      leaseAgeMs: () => 10,
    });
    const { body } = await metrics.render();
    expect(sample(body, 'approval_connector_sync_cursor_age_seconds')).toBeUndefined();
    expect(sample(body, 'approval_connector_lease_age_seconds')).toBe(0.01);
  });

  it('counts pushes, runs, tasks, poll errors and key events with their labels', async () => {
    const metrics = new ConnectorMetrics();
    metrics.approvalsPushed(50);
    metrics.approvalsPushed(7);
    metrics.syncRun('incremental', 'success');
    metrics.syncRun('incremental', 'success');
    metrics.syncRun('reconcile', 'failure');
    metrics.taskFinished('approve', 'success', 0.2);
    metrics.taskFinished('approve', 'authenticationError', 3);
    metrics.taskFinished('reject', 'success', 0.01);
    metrics.pollError();
    metrics.keyEvent('rotated');
    metrics.keyEvent('rotated');
    metrics.keyEvent('expiring');
    metrics.ready(true);

    const { body } = await metrics.render();
    expect(sample(body, 'approval_connector_approvals_pushed_total')).toBe(57);
    expect(sample(body, 'approval_connector_sync_runs_total{mode="incremental",outcome="success"}')).toBe(2);
    expect(sample(body, 'approval_connector_sync_runs_total{mode="reconcile",outcome="failure"}')).toBe(1);
    expect(sample(body, 'approval_connector_tasks_total{type="approve",status="success"}')).toBe(1);
    expect(sample(body, 'approval_connector_tasks_total{type="approve",status="authenticationError"}')).toBe(
      1,
    );
    expect(sample(body, 'approval_connector_tasks_total{type="reject",status="success"}')).toBe(1);
    expect(sample(body, 'approval_connector_task_duration_seconds_count{type="approve"}')).toBe(2);
    expect(sample(body, 'approval_connector_task_duration_seconds_sum{type="approve"}')).toBe(3.2);
    expect(sample(body, 'approval_connector_task_duration_seconds_bucket{le="0.25",type="approve"}')).toBe(1);
    expect(sample(body, 'approval_connector_task_duration_seconds_bucket{le="+Inf",type="reject"}')).toBe(1);
    expect(sample(body, 'approval_connector_poll_errors_total')).toBe(1);
    expect(sample(body, 'approval_connector_key_events_total{event="rotated"}')).toBe(2);
    expect(sample(body, 'approval_connector_key_events_total{event="expiring"}')).toBe(1);
    expect(sample(body, 'approval_connector_ready')).toBe(1);

    metrics.ready(false);
    expect(sample((await metrics.render()).body, 'approval_connector_ready')).toBe(0);
  });

  it('computes the sync lag and the key expiry at each scrape, from the clock', async () => {
    let now = T0;
    const metrics = new ConnectorMetrics({ now: () => now });
    metrics.syncCursor(new Date(T0 - 90_000));
    metrics.keyExpiresAt(new Date(T0 + 3_600_000));
    let { body } = await metrics.render();
    expect(sample(body, 'approval_connector_sync_lag_seconds')).toBe(90);
    expect(sample(body, 'approval_connector_key_expiry_seconds')).toBe(3600);

    // Nothing recorded since, yet the lag grows and the expiry nears: a stalled sync shows.
    now += 60_000;
    ({ body } = await metrics.render());
    expect(sample(body, 'approval_connector_sync_lag_seconds')).toBe(150);
    expect(sample(body, 'approval_connector_key_expiry_seconds')).toBe(3540);

    now = T0 + 3_600_000 + 10_000;
    ({ body } = await metrics.render());
    expect(sample(body, 'approval_connector_key_expiry_seconds')).toBe(-10);

    metrics.syncCursor(undefined);
    metrics.keyExpiresAt(undefined);
    ({ body } = await metrics.render());
    expect(sample(body, 'approval_connector_sync_lag_seconds')).toBeUndefined();
    expect(sample(body, 'approval_connector_key_expiry_seconds')).toBeUndefined();
  });

  it('never shows a negative lag when the source clock runs ahead', async () => {
    const metrics = new ConnectorMetrics({ now: () => T0 });
    metrics.syncCursor(new Date(T0 + 5_000));
    expect(sample((await metrics.render()).body, 'approval_connector_sync_lag_seconds')).toBe(0);
  });

  it('keeps two instances apart, and off the global registry', async () => {
    const first = new ConnectorMetrics();
    const second = new ConnectorMetrics();
    first.approvalsPushed(3);
    first.syncRun('snapshot', 'success');
    second.approvalsPushed(1);

    expect(first.registry).not.toBe(second.registry);
    expect(sample((await first.render()).body, 'approval_connector_approvals_pushed_total')).toBe(3);
    expect(sample((await second.render()).body, 'approval_connector_approvals_pushed_total')).toBe(1);
    expect((await second.render()).body).not.toContain('mode="snapshot"');
    expect(globalRegistry.getSingleMetric('approval_connector_approvals_pushed_total')).toBeUndefined();
  });

  it('registers on a registry it is given, beside the metrics already there', async () => {
    const registry = new Registry();
    registry.setDefaultLabels({ connector: 'jira' });
    const metrics = new ConnectorMetrics({ registry });
    metrics.pollError();
    expect(metrics.registry).toBe(registry);
    expect(await registry.metrics()).toContain('approval_connector_poll_errors_total{connector="jira"} 1');
  });

  it('refuses a registry that already holds its metrics', () => {
    const registry = new Registry();
    new ConnectorMetrics({ registry });
    expect(() => new ConnectorMetrics({ registry })).toThrow(
      expect.objectContaining({
        code: 'validation',
        issues: [expect.objectContaining({ path: ['registry'] })],
      }),
    );
  });

  it('never throws on a value that would corrupt a metric, such as a negative task duration: it drops the value', async () => {
    const metrics = new ConnectorMetrics({ now: () => T0 });
    metrics.syncCursor(new Date(T0 - 5_000));
    expect(() => metrics.taskFinished('approve', 'success', -3_600)).not.toThrow();
    expect(() => metrics.taskFinished('approve', 'success', Number.NaN)).not.toThrow();
    expect(() => metrics.approvalsPushed(-1)).not.toThrow();
    expect(() => metrics.syncCursor(new Date('not a date'))).not.toThrow();
    expect(() => metrics.keyExpiresAt(new Date('not a date'))).not.toThrow();

    const { body } = await metrics.render();
    // The tasks are counted; their durations are not observed.
    expect(sample(body, 'approval_connector_tasks_total{type="approve",status="success"}')).toBe(2);
    expect(sample(body, 'approval_connector_task_duration_seconds_count{type="approve"}')).toBeUndefined();
    expect(sample(body, 'approval_connector_approvals_pushed_total')).toBe(0);
    // An invalid instant is an unknown one: absent, not a stale or a wrong value.
    expect(sample(body, 'approval_connector_sync_lag_seconds')).toBeUndefined();
    expect(sample(body, 'approval_connector_key_expiry_seconds')).toBeUndefined();
  });

  it('refuses buckets that are not in increasing order when it is built', () => {
    expect(() => new ConnectorMetrics({ taskDurationBuckets: [1, 0.5] })).toThrow(ValidationError);
  });

  it('accepts only the documented label values', () => {
    const metrics = new ConnectorMetrics();
    expectTypeOf(metrics.syncRun)
      .parameter(0)
      .toEqualTypeOf<'incremental' | 'snapshot' | 'reconcile' | 'lookup'>();
    expectTypeOf(metrics.syncRun).parameter(1).toEqualTypeOf<'success' | 'failure' | 'interrupted'>();
    expectTypeOf(metrics.keyEvent)
      .parameter(0)
      .toEqualTypeOf<'created' | 'rotated' | 'adopted' | 'expiring' | 'expired'>();
    expectTypeOf(metrics.taskFinished)
      .parameter(1)
      .toEqualTypeOf<
        'success' | 'internalError' | 'authenticationError' | 'serviceUnavailable' | 'systemError'
      >();
  });
});
