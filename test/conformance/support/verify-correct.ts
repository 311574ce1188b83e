// What `connector verify` loads in its tests: a module that exports `conformance`.
import { incrementalSubject } from './connectors.js';

export const conformance = incrementalSubject();
