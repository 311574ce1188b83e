/**
 * Where `connector dev` writes: lines (the banner, log lines, a compiler's errors) and, on a terminal, a status
 * block kept below them, redrawn in place.
 * @module
 */

/** What {@link DevOutput} writes to: `process.stdout`, or a stand-in in tests. */
export interface DevStream {
  write(text: string): unknown;
  /** Whether it is a terminal: only there is the status block drawn. */
  isTTY?: boolean;
  /** The terminal's width, in characters. */
  columns?: number;
}

// Back to the start of the line, and clear from there to the end of the screen.
const START_OF_LINE = '\r';
const CLEAR_BELOW = '\u001b[J';
const up = (lines: number) => `\u001b[${lines}A`;

/**
 * Lines of text, and on a terminal a status block below them: each write erases the block, writes its lines, and
 * draws the block again, so that the block stays at the bottom. Elsewhere (a pipe, a file, CI) only the lines are
 * written, with no control sequence.
 */
export class DevOutput {
  readonly #stream: DevStream;
  #status: readonly string[] = [];
  /** How many lines of the status block are on the screen; the cursor is at the end of the last one. */
  #drawn = 0;

  constructor(stream: DevStream) {
    this.#stream = stream;
  }

  /** Whether the status block is drawn: the stream is a terminal. */
  get interactive(): boolean {
    return this.#stream.isTTY === true;
  }

  /** How many characters a line of the status block may take: the terminal's width (80 when it says none). */
  get width(): number {
    const columns = this.#stream.columns ?? 0;
    return columns > 0 ? columns : 80;
  }

  /** Writes `text` (one line or several; a final newline is added if it has none) above the status block. */
  write(text: string): void {
    const lines = text.endsWith('\n') ? text : `${text}\n`;
    if (!this.interactive) {
      this.#stream.write(lines);
      return;
    }
    this.#stream.write(`${this.#erase()}${lines}${this.#draw()}`);
  }

  /** Replaces the status block, one line each (each shorter than {@link width}); nothing when not a terminal. */
  status(lines: readonly string[]): void {
    if (!this.interactive) return;
    if (lines.length === this.#status.length && lines.every((line, index) => line === this.#status[index]))
      return;
    this.#status = [...lines];
    this.#stream.write(`${this.#erase()}${this.#draw()}`);
  }

  /** Removes the status block from the screen; the lines stay. */
  close(): void {
    this.#status = [];
    if (this.interactive && this.#drawn > 0) this.#stream.write(this.#erase());
  }

  #erase(): string {
    if (this.#drawn === 0) return '';
    const back = `${START_OF_LINE}${this.#drawn > 1 ? up(this.#drawn - 1) : ''}${CLEAR_BELOW}`;
    this.#drawn = 0;
    return back;
  }

  #draw(): string {
    this.#drawn = this.#status.length;
    return this.#status.join('\n');
  }
}
