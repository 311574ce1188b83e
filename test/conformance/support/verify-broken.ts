// What `connector verify` loads in its tests: a connector that never sets `resolved`.
import { incrementalSubject } from './connectors.js';

export const conformance = incrementalSubject('resolved-never-set');
