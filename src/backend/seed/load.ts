import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { toIssues, ValidationError, type ValidationIssue } from '../../errors.js';
import { ServiceError } from '../errors.js';
import type { Store } from '../store/index.js';
import { Seed, type SeedInput, type SeedSystem } from './schema.js';

type SystemSeed = z.output<typeof SeedSystem>;

/** Validates a seed, turning every problem into one {@link ValidationError} that names each path. */
export function parseSeed(input: unknown, subject = 'seed'): Seed {
  const result = Seed.safeParse(input);
  if (!result.success) throw new ValidationError(subject, toIssues(result.error));
  return result.data;
}

/** Reads and validates a seed JSON file. */
export function readSeedFile(file: string): Seed {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ValidationError(
      `seed file ${file}`,
      [{ path: [], message: `cannot be read as JSON: ${message}`, code: 'invalid_format' }],
      {
        cause: error,
      },
    );
  }
  return parseSeed(json, `seed file ${file}`);
}

/**
 * Loads a seed into the store in one transaction: either all of it is stored, or (on a reference to a missing
 * user, a duplicate id or token, an invalid approval) none of it, with a {@link ValidationError} naming the place.
 * Answers the ids of the systems made, by organization, in the seed's order.
 */
export function applySeed(store: Store, input: SeedInput | Seed, subject = 'seed'): string[][] {
  const seed = parseSeed(input, subject);
  return store.transaction(() =>
    seed.organizations.map((org, o) => {
      const at = (...path: (string | number)[]) => ['organizations', o, ...path];
      const organization = guard(subject, at('id'), () =>
        store.organizations.create({ id: org.id, name: org.name }),
      );
      org.managementTokens.forEach((token, t) => {
        guard(subject, at('managementTokens', t), () =>
          store.tokens.createManagement(organization.id, token),
        );
      });
      const userIds = new Map<string, string>();
      org.users.forEach((user, u) => {
        const created = guard(subject, at('users', u), () => store.users.create(organization.id, user));
        userIds.set(user.email.toLowerCase(), created.id);
      });
      return org.systems.map((sys, s) => {
        const where = (...path: (string | number)[]) => at('systems', s, ...path);
        const system = guard(subject, where('id'), () => store.systems.create(organization.id, sys));
        sys.connectorTokens.forEach((token, t) => {
          guard(subject, where('connectorTokens', t), () =>
            store.tokens.createConnector(organization.id, system.id, token),
          );
        });
        if (sys.connector !== undefined) {
          const connector = sys.connector;
          guard(subject, where('connector'), () => store.connectors.register(system.id, connector));
        }
        sys.userMappings.forEach((mapping, m) => {
          const userId = userIds.get(mapping.email.toLowerCase());
          if (userId === undefined) {
            fail(
              subject,
              where('userMappings', m, 'email'),
              `no user of this organization has email ${mapping.email}`,
            );
          }
          guard(subject, where('userMappings', m), () =>
            store.mappings.addMany(system.id, [{ userId, systemUserId: mapping.systemUserId }]),
          );
        });
        sys.approvals.forEach((approval, a) => {
          const { id, ...change } = approval;
          guard(subject, where('approvals', a), () => store.approvals.write(system.id, id, change));
        });
        guard(subject, where('uiTemplates'), () => store.templates.putMany(system.id, sys.uiTemplates));
        if (sys.state !== undefined) store.states.put(system.id, sys.state);
        return system.id;
      });
    }),
  );
}

/** A seed's console sign-ins, by the id of their system in the store. */
export type SeededSignIns = Map<string, SystemSeed['consoleSignIns']>;

/**
 * The console's demo sign-ins of the seed's systems, by the id of the system in the store: the ids `applySeed`
 * answered, or, for a store seeded before (a data file), the system the seed names by id or by a connector token.
 * A system the store does not hold is left out.
 */
export function seededSignIns(
  store: Store,
  seed: Seed,
  seededIds: readonly (readonly string[])[] | undefined,
): SeededSignIns {
  const signIns: SeededSignIns = new Map();
  seed.organizations.forEach((org, o) => {
    org.systems.forEach((sys, s) => {
      if (sys.consoleSignIns.length === 0) return;
      const id = seededIds?.[o]?.[s] ?? storedSystemOf(store, sys);
      if (id !== undefined) signIns.set(id, sys.consoleSignIns);
    });
  });
  return signIns;
}

function storedSystemOf(store: Store, sys: SystemSeed): string | undefined {
  if (sys.id !== undefined) return store.systems.find(sys.id)?.id;
  for (const token of sys.connectorTokens) {
    const principal = store.tokens.resolve(token);
    if (principal?.kind === 'connector') return principal.systemId;
  }
  return undefined;
}

function guard<T>(subject: string, path: (string | number)[], fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof ServiceError) fail(subject, path, error.detail, error);
    throw error;
  }
}

function fail(subject: string, path: ValidationIssue['path'], message: string, cause?: unknown): never {
  throw new ValidationError(subject, [{ path, message, code: 'custom' }], { cause });
}
