import { z } from 'zod';
import {
  ApprovalWrite,
  ConnectorRegistration,
  JsonObjectInput,
  UiTemplateWrite,
  Uuid,
} from '../../api/index.js';

const Token = z.string().min(8, 'a token has at least 8 characters');

/** A user of a seeded organization. `id` is generated when absent. */
export const SeedUser = z.strictObject({
  id: Uuid.optional(),
  email: z.email(),
  firstName: z.string().min(1),
  lastName: z.string().min(1),
});

/** A user mapping of a seeded system; the user is named by email, within the same organization. */
export const SeedUserMapping = z.strictObject({
  email: z.string().min(1),
  systemUserId: z.string().min(1),
});

/**
 * A demo approver's sign-in in the system's source, which the console offers to fill in when that approver acts
 * (the console's `DemoSignIn`). Only for demo accounts: the console shows it to whoever is signed in.
 */
export const SeedConsoleSignIn = z.strictObject({
  /** The approver's id, as the system's approvals name it. */
  approver: z.string().min(1),
  username: z.string().min(1),
  password: z.string().min(1),
});

/** A seeded system with its tokens and data. */
export const SeedSystem = z.strictObject({
  id: Uuid.optional(),
  name: z.string().min(1),
  /** Connector tokens (plain; stored hashed) that open the v2 API for this system. */
  connectorTokens: z.array(Token).default([]),
  /** A connector registration, as Update connector (endpoint 12) takes it, so tasks can be created at once. */
  connector: ConnectorRegistration.optional(),
  userMappings: z.array(SeedUserMapping).default([]),
  approvals: z.array(ApprovalWrite).default([]),
  uiTemplates: z.array(UiTemplateWrite).default([]),
  state: JsonObjectInput.optional(),
  /** Demo sign-ins the console offers to fill in for the system's approvers, one per approver; not stored. */
  consoleSignIns: z
    .array(SeedConsoleSignIn)
    .default([])
    .superRefine((signIns, ctx) => {
      const seen = new Set<string>();
      signIns.forEach(({ approver }, index) => {
        if (seen.has(approver))
          ctx.addIssue({
            code: 'custom',
            path: [index, 'approver'],
            message: `approver ${approver} has a sign-in already`,
          });
        seen.add(approver);
      });
    }),
});

/** A seeded organization with its management tokens, users and systems. */
export const SeedOrganization = z.strictObject({
  id: Uuid.optional(),
  name: z.string().min(1),
  /** Management tokens (plain; stored hashed) that open the v1 API for this organization. */
  managementTokens: z.array(Token).default([]),
  users: z.array(SeedUser).default([]),
  systems: z.array(SeedSystem).default([]),
});

/** A seed file: what the backend holds when it starts. Unknown keys are errors, so a typo does not go unnoticed. */
export const Seed = z.strictObject({
  $schema: z.string().optional(),
  organizations: z.array(SeedOrganization).default([]),
});

/** A seed as written (defaults not yet applied). */
export type SeedInput = z.input<typeof Seed>;
/** A seed after validation. */
export type Seed = z.output<typeof Seed>;
