import { createInterface } from 'node:readline/promises';

/** One answer of a {@link Prompter.select} question. */
export interface Choice {
  value: string;
  hint: string;
}

/**
 * The questions `connector create` asks on a terminal. Each resolves with the answer, or rejects with an
 * `AbortError` when the person cancels (Ctrl+C, or Ctrl+D closing the input).
 */
export interface Prompter {
  /** A line of text; an empty answer takes `initial`. `check` names what is wrong with an answer, which is asked again. */
  text(
    message: string,
    options: { initial: string; check?: (answer: string) => string | undefined },
  ): Promise<string>;
  /** One of `choices`, by its number or its value; an empty answer takes `initial`. */
  select(message: string, choices: readonly Choice[], initial: string): Promise<string>;
  /** Yes or no; an empty answer takes `initial`. */
  confirm(message: string, initial: boolean): Promise<boolean>;
  close(): void;
}

/**
 * Questions on a terminal, with Node's own readline: the few questions of `connector create` (a name, a numbered
 * choice, yes or no) need no prompt library, and so `npx create-connector` and every install of the kit download
 * none.
 */
export function terminalPrompter(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Prompter {
  const lines = createInterface({ input, output, terminal: true });
  const cancelled = new AbortController();
  // Ctrl+C and Ctrl+D close the interface, and so does the end of the input; a question pending then would never
  // settle, so closing cancels it.
  lines.on('close', () => cancelled.abort());
  const ask = async (question: string) =>
    (await lines.question(question, { signal: cancelled.signal })).trim();
  const repeat = async <T>(question: string, read: (answer: string) => T | undefined, hint: string) => {
    for (;;) {
      const value = read(await ask(question));
      if (value !== undefined) return value;
      output.write(`  ${hint}\n`);
    }
  };

  return {
    async text(message, { initial, check }) {
      for (;;) {
        const answer = (await ask(`${message} (${initial}) `)) || initial;
        const problem = check?.(answer);
        if (problem === undefined) return answer;
        output.write(`  ${problem}\n`);
      }
    },
    async select(message, choices, initial) {
      const width = Math.max(...choices.map((choice) => choice.value.length));
      output.write(`${message}\n`);
      for (const [index, choice] of choices.entries()) {
        output.write(`  ${index + 1}. ${choice.value.padEnd(width)}  ${choice.hint}\n`);
      }
      const initialNumber = choices.findIndex((choice) => choice.value === initial) + 1;
      return repeat(
        `Choose 1-${choices.length} (${initialNumber}) `,
        (answer) => {
          if (answer === '') return initial;
          const chosen = /^\d+$/.test(answer)
            ? choices[Number(answer) - 1]
            : choices.find((choice) => choice.value === answer);
          return chosen?.value;
        },
        `Answer a number from 1 to ${choices.length}, or a name from the list.`,
      );
    },
    confirm(message, initial) {
      return repeat(
        `${message} (${initial ? 'Y/n' : 'y/N'}) `,
        (answer) => {
          const word = answer.toLowerCase();
          if (word === '') return initial;
          if (word === 'y' || word === 'yes') return true;
          if (word === 'n' || word === 'no') return false;
          return undefined;
        },
        'Answer y or n.',
      );
    },
    close() {
      lines.close();
    },
  };
}
