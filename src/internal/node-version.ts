/**
 * The Node.js versions the kit runs on, checked in one place: by the `connector` command before it loads anything
 * else, and on import of every entry point (through `node-guard.ts`). This module imports nothing, so it loads on
 * any Node.js.
 * @module
 */

/**
 * The oldest Node.js the kit runs on, the same as `engines.node` in package.json: undici needs it, and
 * `node:sqlite` (the reference backend's store) is there without a flag.
 */
export const MINIMUM_NODE_VERSION = '22.19.0';

/**
 * Why this Node.js cannot run the kit, as one sentence for a person (the version found, the version needed, how to
 * get one), or `undefined` when it can.
 * @param version a Node.js version as `process.versions.node` gives it
 * @param executable the Node.js binary, named in the message so a user with several knows which one ran
 */
export function unsupportedNodeMessage(
  version: string = process.versions.node,
  executable: string = process.execPath,
): string | undefined {
  if (compareVersions(version, MINIMUM_NODE_VERSION) >= 0) return undefined;
  return (
    `approval-connector-kit needs Node.js ${MINIMUM_NODE_VERSION} or newer, but this is Node.js ${version} ` +
    `(${executable}). Install a current LTS release from https://nodejs.org/en/download, or switch with a ` +
    'version manager (for example `nvm install --lts`), then run it again.'
  );
}

function compareVersions(left: string, right: string): number {
  const a = parts(left);
  const b = parts(right);
  for (let i = 0; i < 3; i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

// `22.19.0`, `v22.19.0` and `24.0.0-pre` alike: the leading numbers count, anything after them is ignored.
function parts(version: string): number[] {
  return version
    .replace(/^v/, '')
    .split('.')
    .slice(0, 3)
    .map((part) => Number.parseInt(part, 10) || 0);
}
