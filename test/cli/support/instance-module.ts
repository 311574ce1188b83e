/** A connector module whose default export is the connector itself, its source built without the environment. */
import { FixtureConnector } from './worker-module.js';

export default new FixtureConnector({ approvals: 1, handlerMs: 0, actionsFile: undefined });
