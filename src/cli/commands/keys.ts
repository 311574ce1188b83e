import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ApprovalKitError, ValidationError } from '../../errors.js';
import { asFlags, nonEmptyString, parseOptions } from '../../internal/options.js';
import {
  generateKeyRingData,
  type KeyRingData,
  KeyRingInvalidError,
  ReadOnlyKeyStore,
} from '../../worker/index.js';
import { EXIT_CODES } from '../exit-codes.js';

const USAGE = `Usage: connector keys generate [--previous FILE] [--out FILE]

Makes a key ring for a read-only key store (a mounted Secret, CONNECTOR_KEYS_FILE with CONNECTOR_KEYS_READ_ONLY):
a new key pair, current from now on, beside the unexpired keys of the previous ring. It holds secret keys: keep it
out of logs and version control.

Options:
  --previous FILE  the ring in use now: its unexpired keys are kept, so tasks sealed to them still open
  --out FILE       write the ring to this new file (mode 0600) rather than to stdout
  -h, --help       show this help`;

const SUBJECT = 'options of connector keys';

const optionsSchema = z.strictObject({
  '--previous': nonEmptyString().optional(),
  '--out': nonEmptyString().optional(),
  '--help': z.boolean().default(false),
});

/** `connector keys generate`: prints (or writes) a key ring with a new current key, and resolves with the exit code. */
export async function runKeysCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      previous: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    // Unknown flags reach the options' check, which names the nearest known one.
    strict: false,
    allowPositionals: true,
  });
  let options: z.output<typeof optionsSchema>;
  try {
    options = parseOptions(optionsSchema, asFlags(values), SUBJECT);
    const [action, extra] = positionals;
    if (!options['--help'] && action !== 'generate') {
      throw new ValidationError(SUBJECT, [
        {
          code: 'custom',
          path: [],
          message:
            action === undefined
              ? 'Expected a subcommand: generate'
              : `Unknown subcommand \`${action}\`: the one known is generate`,
        },
      ]);
    }
    if (extra !== undefined) {
      throw new ValidationError(SUBJECT, [
        { code: 'custom', path: [], message: `Unexpected argument \`${extra}\`` },
      ]);
    }
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return EXIT_CODES.refused;
  }
  if (options['--help']) {
    console.log(USAGE);
    return EXIT_CODES.done;
  }

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
