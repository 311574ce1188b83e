import { CronJob, validateCronExpression } from 'cron';
import { z } from 'zod';

/** When a job runs: a cron expression (`'0 6 * * 1-5'`, evaluated in UTC) or an interval in milliseconds between runs. */
export type Schedule = string | number;

/** A job on a schedule. */
export interface ScheduledJob {
  stop(): void;
}

const SCHEDULE = 'a cron expression or a number of milliseconds from 1 and up';

/** A {@link Schedule} option: a valid cron expression, or a whole number of milliseconds from 1 and up. */
export const scheduleSchema = z
  .union([z.string(), z.number({ error: SCHEDULE }).int({ error: SCHEDULE }).min(1, { error: SCHEDULE })], {
    error: SCHEDULE,
  })
  .superRefine((schedule, context) => {
    if (typeof schedule !== 'string') return;
    const { valid, error } = validateCronExpression(schedule);
    if (!valid) {
      context.addIssue({
        code: 'invalid_format',
        format: 'cron',
        input: schedule,
        message: `a valid cron expression (${String(error?.message ?? error)})`,
      });
    }
  });

/**
 * Runs `tick` on a schedule. An interval counts from the end of the previous run, so runs never overlap; a cron
 * job skips a tick that comes while the previous run is still going. `tick` handles its own errors: a rejection
 * is dropped (never an unhandled rejection, nor the `cron` package's console output) and the schedule goes on.
 */
export function runOnSchedule(schedule: Schedule, tick: () => Promise<void>): ScheduledJob {
  const run = () => tick().catch(() => {});
  if (typeof schedule === 'number') {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const next = () => {
      timer = setTimeout(() => {
        void run().finally(() => {
          if (!stopped) next();
        });
      }, schedule);
      timer.unref();
    };
    next();
    return {
      stop() {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }
  const job = CronJob.from({
    cronTime: schedule,
    onTick: run,
    start: true,
    timeZone: 'UTC',
    waitForCompletion: true,
    unrefTimeout: true,
  });
  return {
    stop() {
      void job.stop();
    },
  };
}

/** What {@link syncJobs} schedules, and how. */
export interface SyncSchedules {
  /** Whether this worker syncs at all (its role). */
  enabled: boolean;
  schedule: Schedule;
  reconcileSchedule: Schedule | false;
  runOnStart: boolean;
}

/**
 * The sync's jobs: a sync run on its schedule, a reconciliation on its own (when the source can be looked up), and
 * one sync run at once when asked. A run's failure is the run's to log: here it is dropped, and the schedule goes on.
 */
export function syncJobs(
  schedules: SyncSchedules,
  runs: { sync(): Promise<unknown>; reconcile?: (() => Promise<unknown>) | undefined },
): ScheduledJob[] {
  if (!schedules.enabled) return [];
  const tick = (run: () => Promise<unknown>) => async () => {
    await run().catch(() => {});
  };
  const jobs = [runOnSchedule(schedules.schedule, tick(runs.sync))];
  if (schedules.reconcileSchedule !== false && runs.reconcile !== undefined) {
    jobs.push(runOnSchedule(schedules.reconcileSchedule, tick(runs.reconcile)));
  }
  if (schedules.runOnStart) void tick(runs.sync)();
  return jobs;
}
