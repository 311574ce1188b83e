/**
 * A connector's worker as a child process: `connector run <module>`, the same command and code path as in
 * production, so that a restart is a clean one (new process, new module graph) and what runs is what ships.
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { connectorCommand } from '../../internal/connector-command.js';

/** How a worker ended: its exit code, or the signal that ended it. */
export type WorkerExit = number | string;

/** Options of {@link WorkerProcess}. */
export interface WorkerProcessOptions {
  /** The project folder: the worker's working directory. */
  cwd: string;
  /** The connector module, relative to `cwd`. */
  module: string;
  /** The worker's environment: its whole configuration (see docs/worker.md). */
  env: NodeJS.ProcessEnv;
  /** Each line the worker writes, on stdout (its log lines) or stderr. */
  onLine(text: string, stream: 'stdout' | 'stderr'): void;
  /** The worker has ended, and every line it wrote has been told. */
  onExit(exit: WorkerExit): void;
  /** How long {@link WorkerProcess.stop} waits after SIGTERM before it kills the worker. */
  stopTimeoutMs: number;
}

/** One run of a connector's worker, from its start to its end. */
export class WorkerProcess {
  readonly #child: ChildProcess;
  readonly #ended: Promise<WorkerExit>;
  readonly #stopTimeoutMs: number;
  #stopping: Promise<WorkerExit> | undefined;

  /** Starts the worker. */
  constructor(options: WorkerProcessOptions) {
    const { command, args } = connectorCommand(['run', options.module]);
    this.#stopTimeoutMs = options.stopTimeoutMs;
    this.#child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      // Its own process group, so that a terminal's Ctrl+C reaches only the loop, which stops the worker once: a
      // second signal would end it at once. The IPC channel tells it when the loop has gone (see cli/connector.ts).
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      createInterface({ input: this.#child[stream]!, crlfDelay: Number.POSITIVE_INFINITY }).on(
        'line',
        (line) => options.onLine(line, stream),
      );
    }
    this.#ended = new Promise((resolve) => {
      this.#child.on('error', (error) => {
        options.onLine(`the worker could not be started: ${error.message}`, 'stderr');
      });
      // 'close', not 'exit': every line it wrote has been read by then.
      this.#child.on('close', (code, signal) => {
        const exit = code ?? signal ?? 'unknown';
        options.onExit(exit);
        resolve(exit);
      });
    });
  }

  /** Whether {@link stop} was called: an end that was asked for. */
  get stopRequested(): boolean {
    return this.#stopping !== undefined;
  }

  /** Whether the worker still runs. */
  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /**
   * Stops the worker as an orchestrator does: SIGTERM, then waits for it to end (it does within its stop deadline,
   * 36 s with the default options); killed only if it has not ended `stopTimeoutMs` after the signal. Idempotent.
   */
  stop(): Promise<WorkerExit> {
    this.#stopping ??= (async () => {
      if (!this.running) return this.#ended;
      this.#child.kill('SIGTERM');
      const guard = setTimeout(() => this.#child.kill('SIGKILL'), this.#stopTimeoutMs);
      try {
        return await this.#ended;
      } finally {
        clearTimeout(guard);
      }
    })();
    return this.#stopping;
  }
}
