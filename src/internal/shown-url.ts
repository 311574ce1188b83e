/** A URL as a message may show it: without user name, password, query or fragment, which may hold secrets. */
export function shownUrl(url: URL | string): string {
  const shown = new URL(String(url));
  shown.username = '';
  shown.password = '';
  shown.search = '';
  shown.hash = '';
  return shown.href;
}
