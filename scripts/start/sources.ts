/**
 * The three simulated source systems of `npm start`, the simulated Jira Service Management site, the simulated SAP
 * system and the simulated ServiceNow instance, with what the rest of the start needs of each: the reference
 * backend's seed (one organization holding the three systems and the simulators' approvers), the connector's
 * settings, the banner's lines, and the approvals an approver could decide now, for the demo approver.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { JiraSimulator } from '../../examples/jira-connector/simulator/simulator.js';
import { sourceApprovalId } from '../../examples/jira-connector/src/approvals.js';
import { SapInboxSimulator } from '../../examples/sap-connector/simulator/simulator.js';
import { approvalId } from '../../examples/sap-connector/src/mapping.js';
import { ServiceNowSimulator } from '../../examples/servicenow-connector/simulator/simulator.js';
import { readSeedFile, type SeedInput } from '../../src/backend/index.js';
import { PortInUseError } from '../../src/errors.js';

/** An approval pending in a source, that one of its approvers could decide now. */
export interface PendingApproval {
  /** Its id in the service, as the connector pushes it. */
  approvalId: string;
  /** How a person names it in the source: a request's key, a task's title. */
  name: string;
  /** The approver, by name. */
  approver: string;
  /** The approver's sign-in in the source, as the console's credentials form takes it. */
  credentials: { username: string; password: string };
  /** Whether the source holds the approver's approval of it, given through its API. */
  approvedInSource(): boolean;
}

/** A decision taken in a source itself (not through the service), as its activity takes one. */
export interface DecidedInSource {
  /** The approval of the approver who decided, by its id in the service. */
  approvalId: string;
  /** How a person names what was decided: a request's key, a change request's number. */
  name: string;
  /** The approver, by name. */
  approver: string;
  /** In the source's own word: Jira declines, ServiceNow rejects. */
  decision: 'approved' | 'declined' | 'rejected';
  /** When it was taken (epoch milliseconds). */
  at: number;
}

/** A simulated source, running, as the start uses it. */
export interface SimulatedSource {
  /** The connector's name: its lines' label, its status line's. */
  name: 'jira' | 'sap' | 'servicenow';
  /** How a person names the system. */
  label: string;
  /** The connector example's folder, relative to the repository. */
  project: string;
  /** The connector token of its system in the seed. */
  connectorToken: string;
  /** The connector's own variables, pointing at the simulator. */
  env: Record<string, string>;
  /** What the banner says of it: where it listens, its approvers and their sign-ins. */
  banner(): string[];
  /** The approvals pending in it now, oldest first as the simulator lists them. */
  pending(): PendingApproval[];
  /**
   * Tells `listener` of each decision its activity takes in the source itself, until the returned function is
   * called; `undefined` for a source that does not push its changes (its schedule brings them).
   */
  onDecidedInSource?(listener: (decision: DecidedInSource) => void): () => void;
  /**
   * Points the source's callouts at its worker's push ingress (`pushUrl`, where the worker listens once it runs), for
   * a source told the address once rather than registered with by the connector; the secret is the one `env` gives
   * the worker (`PUSH_SECRET`).
   */
  deliverTo?(pushUrl: string): void;
  close(): Promise<void>;
}

/** Options of {@link startSources}. */
export interface SourcesOptions {
  /** The simulated Jira's port, on 127.0.0.1; 0 picks a free one. */
  jiraPort: number;
  /** The simulated SAP system's port, on 127.0.0.1; 0 picks a free one. */
  sapPort: number;
  /** The simulated ServiceNow instance's port, on 127.0.0.1; 0 picks a free one. */
  servicenowPort: number;
  /** Milliseconds between two steps of each simulator's activity; 0: none. */
  activityMs: number;
}

const readSeed = (path: string) =>
  readSeedFile(fileURLToPath(new URL(path, import.meta.url))).organizations[0]!;

/** The examples' own seeds, each an organization with its simulator's approvers and a system for its connector. */
const JIRA_SEED = readSeed('../../examples/jira-connector/simulator/service-seed.json');
const SAP_SEED = readSeed('../../examples/sap-connector/simulator/service-seed.json');
const SERVICENOW_SEED = readSeed('../../examples/servicenow-connector/simulator/service-seed.json');

/** The management token of the organization `Example`: its own, neither example's. */
export const START_MANAGEMENT_TOKEN = 'example-management';

/**
 * The reference backend's seed: one organization, `Example`, with a management token of its own, the users of the
 * examples' seeds (the simulators' approvers), and their three systems with their connector tokens and mappings (the
 * SAP system's mapped by the seed; the Jira and ServiceNow connectors keep their own, by the emails their sources
 * show), and the approvers' sign-ins the console offers to fill in (those of the simulators started with `seed: 1`,
 * as here).
 */
export function startSeed(): SeedInput {
  return {
    organizations: [
      {
        name: 'Example',
        managementTokens: [START_MANAGEMENT_TOKEN],
        users: [...JIRA_SEED.users, ...SAP_SEED.users, ...SERVICENOW_SEED.users],
        systems: [JIRA_SEED.systems[0]!, SAP_SEED.systems[0]!, SERVICENOW_SEED.systems[0]!],
      },
    ],
  };
}

/** Starts the simulators; one that fails to start closes those started before it. */
export async function startSources(options: SourcesOptions): Promise<SimulatedSource[]> {
  const started: SimulatedSource[] = [];
  try {
    for (const start of [startJira, startSap, startServiceNow]) started.push(await start(options));
    return started;
  } catch (error) {
    await Promise.all(started.map((source) => source.close()));
    throw error;
  }
}

/** A simulator started on its port, a port in use told by the flag that changes it. */
function listening<T>(start: Promise<T>, port: number, setting: string): Promise<T> {
  return start.catch((error: unknown) => {
    throw PortInUseError.from(error, { port, host: '127.0.0.1', setting });
  });
}

/** The variables with which a connector keeps its approvers' user mappings in the start's organization. */
function keepsUserMappings(system: { id?: string | undefined }): Record<string, string> {
  return { APPROVAL_MANAGEMENT_TOKEN: START_MANAGEMENT_TOKEN, APPROVAL_SYSTEM_ID: system.id! };
}

/** A simulator's banner: where it listens, then each approver's name, user name and password. */
function bannerOf(
  title: string,
  signIn: string,
  approvers: readonly { name: string; user: string; password: string }[],
): string[] {
  return [
    title,
    `  approvers (${signIn}: user name and password in the console):`,
    ...approvers.map(({ name, user, password }) => `    ${name.padEnd(18)} ${user.padEnd(24)} ${password}`),
  ];
}

async function startJira({ jiraPort, activityMs }: SourcesOptions): Promise<SimulatedSource> {
  const site = await listening(JiraSimulator.start({ port: jiraPort, seed: 1 }), jiraPort, '--jira-port');
  const listeners = new Set<(decision: DecidedInSource) => void>();
  const step = () => {
    for (const event of site.advance()) {
      if (event.type !== 'decided' || event.via !== 'source') continue;
      const issueId = site.request(event.issueKey)?.id;
      const approver = site.approvers.find(({ accountId }) => accountId === event.accountId);
      if (issueId === undefined || approver === undefined) continue;
      const approvalId = sourceApprovalId({
        issueId,
        approvalId: event.approvalId,
        accountId: event.accountId,
      });
      const decided = { approvalId, name: event.issueKey, approver: approver.displayName, at: Date.now() };
      for (const listener of listeners) listener({ ...decided, decision: event.decision });
    }
  };
  const activity = activityMs > 0 ? setInterval(step, activityMs).unref() : undefined;
  const system = JIRA_SEED.systems[0]!;
  return {
    name: 'jira',
    label: 'Jira',
    project: 'examples/jira-connector',
    connectorToken: system.connectorTokens[0]!,
    env: {
      ...site.connectorEnv(),
      // The connector keeps its approvers' user mappings by the emails Jira shows.
      ...keepsUserMappings(system),
      // Changes pushed: the connector registers its webhook in the simulated Jira, for the worker's push ingress
      // (the sync account administers the simulated site, as registering one needs).
      JIRA_WEBHOOK: 'register',
    },
    banner: () => [
      ...bannerOf(
        `Simulated Jira Service Management at ${site.url} (${site.jql})`,
        'email and API token',
        site.approvers.map(({ displayName, email, apiToken }) => ({
          name: displayName,
          user: email,
          password: apiToken,
        })),
      ),
      '  a decision taken there shows in the console within seconds: Jira delivers it to the connector',
    ],
    pending: () =>
      site.requests().flatMap((request) =>
        request.approvals
          .filter(({ finalDecision }) => finalDecision === 'pending')
          .flatMap((approval) =>
            approval.approvers.flatMap(({ accountId, decision }) => {
              const account = site.approvers.find((candidate) => candidate.accountId === accountId);
              if (decision !== 'pending' || account === undefined) return [];
              return [
                {
                  approvalId: sourceApprovalId({ issueId: request.id, approvalId: approval.id, accountId }),
                  name: request.key,
                  approver: account.displayName,
                  credentials: { username: account.email, password: account.apiToken },
                  approvedInSource: () =>
                    site
                      .decisions({ via: 'api' })
                      .some(
                        (event) =>
                          event.issueKey === request.key &&
                          event.approvalId === approval.id &&
                          event.accountId === accountId &&
                          event.decision === 'approved',
                      ),
                },
              ];
            }),
          ),
      ),
    onDecidedInSource: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: async () => {
      clearInterval(activity);
      listeners.clear();
      await site.close();
    },
  };
}

async function startSap({ sapPort, activityMs }: SourcesOptions): Promise<SimulatedSource> {
  const activity = activityMs > 0 ? { activityIntervalMs: activityMs } : {};
  const sap = await listening(
    SapInboxSimulator.start({ port: sapPort, seed: 1, ...activity }),
    sapPort,
    '--sap-port',
  );
  return {
    name: 'sap',
    label: 'SAP',
    project: 'examples/sap-connector',
    connectorToken: SAP_SEED.systems[0]!.connectorTokens[0]!,
    env: {
      SAP_SERVICE_URL: sap.serviceUrl,
      SAP_USER: sap.technicalUser.username,
      SAP_PASSWORD: sap.technicalUser.password,
    },
    banner: () =>
      bannerOf(
        `Simulated SAP system (My Inbox) at ${sap.serviceUrl}`,
        'SAP user and password',
        sap.approvers.map(({ displayName, username, password }) => ({
          name: displayName,
          user: username,
          password,
        })),
      ),
    pending: () =>
      sap
        .openTasks()
        .filter(({ status }) => status === 'READY')
        .flatMap((task) =>
          task.potentialOwners.flatMap(({ username }) => {
            const owner = sap.approvers.find((candidate) => candidate.username === username);
            if (owner === undefined) return [];
            return [
              {
                approvalId: approvalId({ origin: task.origin, instanceId: task.instanceId }, username),
                name: `task ${task.instanceId} (${task.title})`,
                approver: owner.displayName,
                credentials: { username, password: owner.password },
                approvedInSource: () =>
                  sap
                    .decisions()
                    .some(
                      (decision) =>
                        decision.instanceId === task.instanceId &&
                        decision.username === username &&
                        decision.via === 'odata' &&
                        task.options.some(
                          ({ key, nature }) => key === decision.decisionKey && nature === 'POSITIVE',
                        ),
                    ),
              },
            ];
          }),
        ),
    close: () => sap.close(),
  };
}

async function startServiceNow({ servicenowPort, activityMs }: SourcesOptions): Promise<SimulatedSource> {
  const instance = await listening(
    ServiceNowSimulator.start({ port: servicenowPort, seed: 1 }),
    servicenowPort,
    '--servicenow-port',
  );
  const listeners = new Set<(decision: DecidedInSource) => void>();
  const step = () => {
    for (const event of instance.advance()) {
      if (event.kind !== 'decided') continue;
      const approval = instance
        .records('sysapproval_approver')
        .find(({ sys_id }) => sys_id === event.approval);
      const approver = instance.approvers.find(({ username }) => username === event.userName);
      if (approval === undefined || approver === undefined) continue;
      const record = instance
        .records(approval.source_table!)
        .find(({ sys_id }) => sys_id === approval.document_id);
      const decided: DecidedInSource = {
        approvalId: event.approval,
        name: record?.number ?? event.approval,
        approver: approver.name,
        decision: event.state === 'rejected' ? 'rejected' : 'approved',
        at: Date.now(),
      };
      for (const listener of listeners) listener(decided);
    }
  };
  const activity = activityMs > 0 ? setInterval(step, activityMs).unref() : undefined;
  // The secret the instance's business rules sign with, and the worker verifies with: this start's own.
  const secret = randomBytes(24).toString('base64url');
  const system = SERVICENOW_SEED.systems[0]!;
  return {
    name: 'servicenow',
    label: 'ServiceNow',
    project: 'examples/servicenow-connector',
    connectorToken: system.connectorTokens[0]!,
    // The connector keeps its approvers' user mappings by their sys_user email.
    env: { ...instance.connectorEnv(), ...keepsUserMappings(system), PUSH_SECRET: secret },
    banner: () => [
      ...bannerOf(
        `Simulated ServiceNow instance at ${instance.url}`,
        'user name and password',
        instance.approvers.map(({ name, username, password }) => ({ name, user: username, password })),
      ),
      '  a decision taken there shows in the console within seconds: its business rules call the connector',
    ],
    // Change requests first: the approvals an approver of ServiceNow decides most.
    pending: () =>
      instance
        .waitingApprovals()
        .sort(
          (a, b) => Number(b.source_table === 'change_request') - Number(a.source_table === 'change_request'),
        )
        .flatMap((approval) => {
          const approver = instance.approvers.find(({ sysId }) => sysId === approval.approver);
          if (approver === undefined) return [];
          const record = instance
            .records(approval.source_table!)
            .find(({ sys_id }) => sys_id === approval.document_id);
          return [
            {
              approvalId: approval.sys_id!,
              name: record?.number ?? approval.sys_id!,
              approver: approver.name,
              credentials: { username: approver.username, password: approver.password },
              approvedInSource: () =>
                instance
                  .decisions()
                  .some(
                    (decision) =>
                      decision.approval === approval.sys_id &&
                      decision.userName === approver.username &&
                      decision.state === 'approved' &&
                      decision.via === 'api',
                  ),
            },
          ];
        }),
    onDecidedInSource: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    // As an administrator points the business rules' REST message at the worker.
    deliverTo: (pushUrl) => instance.setPushTarget({ url: pushUrl, secret }),
    close: async () => {
      clearInterval(activity);
      listeners.clear();
      await instance.close();
    },
  };
}
