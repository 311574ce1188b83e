/** A connector module that exports its class rather than a function that builds the connector: refused. */
export default class NotABuilder {}
