import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { ApprovalKitError, ValidationError } from '../../errors.js';
import { CommandLine } from '../../internal/command-line.js';
import { nonEmptyString } from '../../internal/options.js';
import {
  generateKeyRingData,
  type KeyRingData,
  KeyRingInvalidError,
  ReadOnlyKeyStore,
} from '../../worker/index.js';
import { readCommandLine } from '../command-line.js';
import { EXIT_CODES } from '../exit-codes.js';

const USAGE = `Usage: connector keys generate [--previous FILE] [--out FILE]

Makes a key ring for a read-only key store (a mounted Secret, CONNECTOR_KEYS_FILE with CONNECTOR_KEYS_READ_ONLY):
a new key pair, current from now on, beside the unexpired keys of the previous ring. It holds secret keys: keep it
out of logs and version control.

Options:
  --previous FILE  the ring in use now: its unexpired keys are kept, so tasks sealed to them still open
  --out FILE       write the ring to this new file (mode 0600) rather than to stdout
  -h, --help       show this help

Exit codes: 0 when the ring was written; 2 for bad options, a previous ring that is none, or an --out file that
exists (nothing is written then); 1 when a file could not be read or written.`;

const commandLine = new CommandLine({
  subject: 'options of connector keys',
  usage: USAGE,
  arguments: { action: z.string().optional() },
  extraArgument: 'generate takes no other',
  flags: {
    previous: { type: 'string', schema: nonEmptyString().optional() },
    out: { type: 'string', schema: nonEmptyString().optional() },
  },
});

/** `connector keys generate`: prints (or writes) a key ring with a new current key, and resolves with the exit code. */
export async function runKeysCommand(argv: readonly string[]): Promise<number> {
  const options = readCommandLine(commandLine, argv, {
    check: (options) => {
      if (options.action === 'generate') return options;
      throw commandLine.refuse(
        options.action === undefined
          ? 'Expected a subcommand: generate'
          : `Unknown subcommand \`${options.action}\`: the one known is generate`,
      );
    },
  });
  if (typeof options === 'number') return options;

  try {
    const previousFile = options['--previous'];
    let previous: KeyRingData | undefined;
    if (previousFile !== undefined) {
      // Read as the worker reads it: JSON or base64 of JSON, checked, never quoted in a message.
      previous = await new ReadOnlyKeyStore({ file: previousFile }).load();
      if (previous === undefined) {
        console.error(`No key ring in ${previousFile}: it is missing or empty`);
        return EXIT_CODES.refused;
      }
    }
    const text = `${JSON.stringify(generateKeyRingData(previous), null, 2)}\n`;
    const out = options['--out'];
    // `wx`: an existing file (the ring in use, say) is never replaced by mistake.
    if (out === undefined) process.stdout.write(text);
    else writeFileSync(out, text, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    console.error(error instanceof ApprovalKitError ? error.message : describeFileError(error));
    // A previous ring that is not one, or an --out that exists, is refused; a file that cannot be written failed.
    const refused =
      error instanceof KeyRingInvalidError ||
      error instanceof ValidationError ||
      (error as NodeJS.ErrnoException).code === 'EEXIST';
    return refused ? EXIT_CODES.refused : EXIT_CODES.failed;
  }
  return EXIT_CODES.done;
}

function describeFileError(error: unknown): string {
  const { code, path } = error as NodeJS.ErrnoException;
  if (code === 'EEXIST') return `${path} exists already; --out writes a new file`;
  if (code !== undefined && path !== undefined) return `Cannot use ${path} (${code})`;
  return String(error);
}
