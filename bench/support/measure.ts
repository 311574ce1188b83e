import { performance } from 'node:perf_hooks';

/** The wall-clock time and this process's CPU time (user and system) of a piece of work. */
export interface Measured {
  elapsedMs: number;
  cpuMicros: number;
}

/** A running measurement: {@link stop} reads both clocks again and gives the difference. */
export function startMeasuring(): { stop: () => Measured } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  return {
    stop: () => {
      const elapsedMs = performance.now() - started;
      const { user, system } = process.cpuUsage(cpu);
      return { elapsedMs, cpuMicros: user + system };
    },
  };
}

/** Measures `work`. */
export async function measure(work: () => Promise<void>): Promise<Measured> {
  const measuring = startMeasuring();
  await work();
  return measuring.stop();
}
