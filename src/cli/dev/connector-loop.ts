/**
 * One connector in the local loop: built with its project's `build` script, run as a worker child process, and on
 * each change of its sources built again and, if the build passed, restarted gracefully on the new build.
 * @module
 */
import { join } from 'node:path';
import type { Logger as PinoLogger } from 'pino';
import type { ConnectorBoard } from './board.js';
import type { LogPrinter } from './logs.js';
import { buildProject, hasBuildScript, watchFolder } from './rebuild.js';
import type { WorkerPhase } from './status.js';
import { type WorkerExit, WorkerProcess } from './worker-process.js';

/** Options of {@link ConnectorLoop}. */
export interface ConnectorLoopOptions {
  /** The project folder: its `build` script is run there, and its `src/` watched. */
  project: string;
  /** The connector module the worker runs, relative to the project. */
  module: string;
  /** The worker's environment. */
  workerEnv: NodeJS.ProcessEnv;
  /** The build's environment. */
  buildEnv: NodeJS.ProcessEnv;
  /** The loop's own lines about this connector. */
  logger: PinoLogger;
  /** Where the worker's lines are printed. */
  printer: LogPrinter;
  /** Fields added to each of the worker's log lines (its name, when several connectors run). */
  label: Record<string, unknown>;
  /** Where the connector's status is kept. */
  board: ConnectorBoard;
  /** How long a stop waits for the worker after SIGTERM before killing it. */
  stopTimeoutMs: number;
}

/** The folder of a project whose changes rebuild and restart its connector. */
export const SOURCE_FOLDER = 'src';

/** A connector built, run, and rebuilt and restarted on every change of its sources, until {@link close}. */
export class ConnectorLoop {
  readonly #options: ConnectorLoopOptions;
  readonly #closing = new AbortController();
  #watch: { close(): void } | undefined;
  #worker: WorkerProcess | undefined;
  /** The build-and-restart in progress, if any; a change meanwhile asks for one more after it. */
  #cycle: Promise<void> | undefined;
  #again = false;
  #building = false;
  #workerPhase: Exclude<WorkerPhase, 'building'> = 'stopped';

  constructor(options: ConnectorLoopOptions) {
    this.#options = options;
  }

  /** Builds and starts the connector, and watches its sources. */
  start(): void {
    const { project, logger } = this.#options;
    const folder = join(project, SOURCE_FOLDER);
    this.#watch = watchFolder(folder, () => this.#changed());
    if (this.#watch === undefined) {
      logger.warn({ folder }, 'cannot watch the sources: the connector is not rebuilt when they change');
    }
    this.#changed();
  }

  /** Stops watching, and stops the worker gracefully (SIGTERM); resolves once it has ended. Idempotent. */
  async close(): Promise<void> {
    this.#closing.abort();
    this.#watch?.close();
    await this.#stopWorker();
    await this.#cycle;
  }

  #changed(): void {
    if (this.#closing.signal.aborted) return;
    if (this.#cycle !== undefined) {
      this.#again = true;
      return;
    }
    this.#cycle = (async () => {
      try {
        do {
          this.#again = false;
          await this.#rebuildAndRestart();
        } while (this.#again && !this.#closing.signal.aborted);
      } catch (error) {
        // Whatever went wrong, the loop keeps the backend up and waits for the next change.
        this.#options.logger.error(
          { err: error },
          'the connector could not be built or started; waiting for a change',
        );
        this.#options.board.error('the connector could not be built or started');
      } finally {
        this.#cycle = undefined;
      }
    })();
  }

  async #rebuildAndRestart(): Promise<void> {
    const { project, logger, board, printer, buildEnv } = this.#options;
    if (hasBuildScript(project)) {
      this.#building = true;
      this.#show();
      logger.info('building the connector');
      const outcome = await buildProject(project, buildEnv, this.#closing.signal);
      this.#building = false;
      this.#show();
      if (this.#closing.signal.aborted) return;
      if (!outcome.ok) {
        printer.text(outcome.output);
        const running = this.#worker?.running === true;
        logger.error(
          running
            ? 'the build failed; the connector keeps running its previous build'
            : 'the build failed; waiting for a change',
        );
        board.error('the build failed');
        return;
      }
    }
    if (this.#worker?.running === true) {
      logger.info('restarting the connector on its new build');
      await this.#stopWorker();
      if (this.#closing.signal.aborted) return;
    }
    this.#start();
  }

  #start(): void {
    const { project, module, workerEnv, printer, label, board, stopTimeoutMs } = this.#options;
    this.#workerPhase = 'starting';
    board.exit = undefined;
    this.#show();
    const worker: WorkerProcess = new WorkerProcess({
      cwd: project,
      module,
      env: workerEnv,
      stopTimeoutMs,
      onLine: (text) => {
        const line = printer.print(text, label);
        if (line === undefined) return;
        board.logged(line);
        if (line.msg === 'connector running' && this.#workerPhase === 'starting') {
          this.#workerPhase = 'running';
          this.#show();
        }
      },
      onExit: (exit) => this.#ended(exit, worker.stopRequested),
    });
    this.#worker = worker;
  }

  /** Stops the worker, if one runs. */
  async #stopWorker(): Promise<void> {
    if (this.#worker?.running !== true) return;
    this.#workerPhase = 'stopping';
    this.#show();
    await this.#worker.stop();
  }

  #ended(exit: WorkerExit, requested: boolean): void {
    const { logger, board } = this.#options;
    this.#workerPhase = 'stopped';
    board.exit = exit;
    this.#show();
    if (requested) {
      if (exit === 'SIGKILL') {
        const { stopTimeoutMs } = this.#options;
        logger.warn({ stopTimeoutMs }, 'the connector had not ended when the stop timed out; killed');
      }
      return;
    }
    logger.error({ exit }, 'the connector ended by itself; waiting for a change');
    board.error(`the connector ended (${typeof exit === 'number' ? `exit code ${exit}` : exit})`);
  }

  /** The board shows the build while one runs, and the worker's phase otherwise. */
  #show(): void {
    this.#options.board.phase = this.#building ? 'building' : this.#workerPhase;
  }
}
