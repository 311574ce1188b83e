/** Limits the console's task endpoint holds to, and its page checks before it sends anything. */

/**
 * The longest comment the console sends with an action. The service's API sets none; a connector hands the comment
 * to its source, whose own limits (an HTTP header, a database column) are usually a few kilobytes.
 */
export const MAX_COMMENT_CHARS = 2_000;

/** How many approvals a page of the console's list shows. */
export const APPROVALS_PER_PAGE = 50;
