import { z } from 'zod';
import { EncryptedCredentials, JsonObjectInput, Uuid } from '../../api/index.js';

/** Bodies of the admin API. Exact: an unknown key is a 400, so a typo is noticed. */
export const AdminSchemas = {
  organization: z.strictObject({ id: Uuid.optional(), name: z.string().min(1).optional() }),
  token: z.strictObject({ token: z.string().min(8).optional() }),
  user: z.strictObject({
    id: Uuid.optional(),
    email: z.string(),
    firstName: z.string(),
    lastName: z.string(),
  }),
  system: z.strictObject({ id: Uuid.optional(), name: z.string().min(1).optional() }),
  tenant: z.strictObject({
    organizationName: z.string().min(1).optional(),
    systemName: z.string().min(1).optional(),
    managementToken: z.string().min(8).optional(),
    connectorToken: z.string().min(8).optional(),
  }),
  task: z.strictObject({
    systemId: z.string().min(1),
    type: z.string().min(1),
    approvalId: z.string().min(1),
    approveComments: z.string().optional(),
    credentials: JsonObjectInput.optional(),
    sealedCredentials: EncryptedCredentials.optional(),
  }),
  leases: z.strictObject({ systemId: z.string().min(1).optional(), taskId: z.string().min(1).optional() }),
} as const;
