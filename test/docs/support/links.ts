/**
 * The links of markdown files, and whether each resolves within a set of files (a package's tarball): a relative
 * path must name one of the files or a folder holding some, and an `#anchor` a heading of the markdown file it
 * points into, by the slugs GitHub and npm give headings.
 * @module
 */
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/** A link of a markdown file, as written. */
export interface Link {
  /** The markdown file, relative to the package's folder. */
  file: string;
  line: number;
  target: string;
}

/** The links of a markdown text, outside code: inline `[text](target)`, images, and reference definitions. */
export function linksOf(text: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  let fenced = false;
  for (const [index, raw] of text.split('\n').entries()) {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const line = raw.replace(/`[^`]*`/g, '');
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: index + 1, target: match[1]! });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (definition) links.push({ line: index + 1, target: definition[1]! });
  }
  return links;
}

/** The anchors of a markdown text's headings, as GitHub and npm make them: a second of the same gets `-1`. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const seen = counts.get(slug) ?? 0;
    counts.set(slug, seen + 1);
    anchors.add(seen === 0 ? slug : `${slug}-${seen}`);
  }
  return anchors;
}

/**
 * The links of the markdown files among `files` (relative to `folder`, with `/`) that do not resolve among them,
 * each with why. A link with a scheme (`https:`, `mailto:`) is absolute, and not checked.
 */
export function brokenLinks(folder: string, files: readonly string[]): Array<Link & { problem: string }> {
  const present = new Set(files);
  const read = (file: string) => readFileSync(join(folder, file), 'utf8');
  const broken: Array<Link & { problem: string }> = [];
  for (const file of files.filter((name) => name.endsWith('.md'))) {
    for (const { line, target } of linksOf(read(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? file : posix.normalize(posix.join(posix.dirname(file), path));
      const isFile = present.has(resolved);
      const isFolder = files.some((other) => other.startsWith(`${resolved.replace(/\/$/, '')}/`));
      if (resolved.startsWith('../') || (!isFile && !isFolder)) {
        broken.push({ file, line, target, problem: `${resolved} is not in the package` });
      } else if (anchor !== undefined && isFile && resolved.endsWith('.md')) {
        if (!anchorsOf(read(resolved)).has(decodeURIComponent(anchor))) {
          broken.push({ file, line, target, problem: `${resolved} has no heading #${anchor}` });
        }
      }
    }
  }
  return broken;
}
