import { describe, expect, it } from 'vitest';
import { DevOutput } from '../../../src/cli/dev/index.js';

/** A stand-in stream that keeps what is written; a terminal when `isTTY`. */
function stream(isTTY: boolean, columns?: number) {
  const written: string[] = [];
  return { written, isTTY, columns, write: (text: string) => written.push(text) };
}

const ESC = '\u001b';
// Back to the start of the line, up n lines (none: the same line), and cleared from there to the end of the screen.
const ERASE = new RegExp(`\r(?:${ESC}\\[(\\d+)A)?${ESC}\\[J`);

/** What the output leaves on a screen, a line each: the status block erased and drawn again in place. */
function screen(written: readonly string[]): string[] {
  const lines = [''];
  let text = written.join('');
  for (let erase = ERASE.exec(text); erase !== null; erase = ERASE.exec(text)) {
    print(lines, text.slice(0, erase.index));
    lines.splice(lines.length - 1 - Number(erase[1] ?? 0));
    lines.push('');
    text = text.slice(erase.index + erase[0].length);
  }
  print(lines, text);
  return lines;
}

function print(lines: string[], text: string): void {
  const [first = '', ...rest] = text.split('\n');
  lines[lines.length - 1] += first;
  lines.push(...rest);
}

describe('DevOutput on a terminal', () => {
  it('keeps the status block below the lines, redrawing it after each', () => {
    const terminal = stream(true, 100);
    const output = new DevOutput(terminal);
    output.write('first line');
    output.status(['status A', 'status B']);
    output.write('second line\nthird line\n');
    output.status(['status C']);
    output.write('fourth line');
    expect(screen(terminal.written)).toEqual([
      'first line',
      'second line',
      'third line',
      'fourth line',
      'status C',
    ]);
  });

  it('writes nothing when the status has not changed', () => {
    const terminal = stream(true);
    const output = new DevOutput(terminal);
    output.status(['same']);
    const writes = terminal.written.length;
    output.status(['same']);
    expect(terminal.written).toHaveLength(writes);
  });

  it('removes the status block when closed, leaving the lines', () => {
    const terminal = stream(true);
    const output = new DevOutput(terminal);
    output.write('a line');
    output.status(['one', 'two']);
    output.close();
    expect(screen(terminal.written)).toEqual(['a line', '']);
  });

  it('takes the terminal’s width, or 80 when it gives none', () => {
    expect(new DevOutput(stream(true, 132)).width).toBe(132);
    expect(new DevOutput(stream(true, 0)).width).toBe(80);
    expect(new DevOutput(stream(true)).width).toBe(80);
  });
});

describe('DevOutput elsewhere', () => {
  it('writes the lines only, with no status and no control sequence', () => {
    const pipe = stream(false);
    const output = new DevOutput(pipe);
    expect(output.interactive).toBe(false);
    output.write('first line');
    output.status(['status A']);
    output.write('second line\n');
    output.close();
    expect(pipe.written.join('')).toBe('first line\nsecond line\n');
  });
});
