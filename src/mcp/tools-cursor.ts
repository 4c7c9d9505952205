// tools/list cursors (MCP's cursor paging). A cursor names the last tool of the page it follows
// by its place in the list's stable order, creation time then id (tools.ts builds the list in
// creation order): the next page starts after that place, wherever it now is. An offset would
// skip tools when definitions before it went away between pages, and show some twice when they
// were added; a place skips none that existed throughout, and a tool created meanwhile comes at
// the end. Cursors are opaque to clients (base64url JSON) but not signed: a made-up one only
// starts a page elsewhere in the caller's own list, which paging reaches anyway, so a signature
// would protect nothing, and its key would have to be shared by every instance on the store.
// What is not a cursor's shape is refused.
import { INVALID_PARAMS, RpcMethodError } from './json-rpc.ts';
import type { McpTool } from './tools.ts';

/** A tool's place in the list: its creation time (ms since the epoch) and its endpoint's id. */
export type ToolPlace = readonly [time: number, id: string];

/** Longer than any cursor the server hands out; a longer one is refused before it is decoded. */
const MAX_CURSOR = 128;
const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The same key creationOrder (docs/operation-names.ts) sorts by: an unreadable date sorts as 0. */
export function placeOf(tool: McpTool): ToolPlace {
  const doc = tool.endpoint.doc;
  return [new Date(doc.createdAt).getTime() || 0, doc._id];
}

const compare = (a: ToolPlace, b: ToolPlace): number => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);

export const cursorAfter = (tool: McpTool): string => Buffer.from(JSON.stringify(placeOf(tool))).toString('base64url');

/** Where the page a cursor asks for starts in a list in creation order (0 without a cursor). */
export function pageStart(tools: readonly McpTool[], cursor: unknown): number {
  if (cursor === undefined) return 0;
  const after = placeIn(cursor);
  const start = tools.findIndex((tool) => compare(placeOf(tool), after) > 0);
  return start === -1 ? tools.length : start;
}

function placeIn(cursor: unknown): ToolPlace {
  let place: unknown;
  try {
    place = typeof cursor === 'string' && cursor.length <= MAX_CURSOR ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined;
  } catch {
    place = undefined;
  }
  if (!Array.isArray(place) || place.length !== 2 || !Number.isSafeInteger(place[0]) || typeof place[1] !== 'string' || !ID.test(place[1])) {
    throw new RpcMethodError(INVALID_PARAMS, 'Invalid params: cursor is not a tools/list cursor (send the nextCursor of the previous page)');
  }
  return place as unknown as ToolPlace;
}
