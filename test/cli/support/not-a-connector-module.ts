/** A connector module whose default export is an object, but no connector: no `tasks`, no `source`. */
export default { name: 'not a connector' };
