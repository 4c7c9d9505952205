// The members of `params` each method dyn serves takes (MCP 2025-11-25's schema), checked before
// the method runs. A member the method does not take is refused (invalid params naming it) rather
// than ignored, as json-rpc.ts refuses an unknown member of the message: a misspelt
// `"argument"` would list records instead of reading one, a misspelt `"cursr"` start over at
// page one. `initialize` has its own check (mcp-server.ts initializeRequest), and notifications
// are not answered, so neither is listed; `_meta` is checked by the SDK's message schema.
//
// | method                       | params members                |
// |------------------------------|-------------------------------|
// | tools/call                   | name (required), arguments, _meta |
// | tools/list, resources/list   | cursor, _meta                 |
// | resources/read               | uri (required), _meta         |
// | ping                         | _meta                         |

type Kind = 'string' | 'object';
interface Member {
  kind: Kind;
  required?: boolean;
}

const meta: Member = { kind: 'object' };
const cursor: Member = { kind: 'string' };

const MEMBERS: Readonly<Record<string, Readonly<Record<string, Member>>>> = {
  'tools/call': { name: { kind: 'string', required: true }, arguments: { kind: 'object' }, _meta: meta },
  'tools/list': { cursor, _meta: meta },
  'resources/list': { cursor, _meta: meta },
  'resources/read': { uri: { kind: 'string', required: true }, _meta: meta },
  ping: { _meta: meta },
};

const isKind = (value: unknown, kind: Kind): boolean => (kind === 'object' ? typeof value === 'object' && value !== null && !Array.isArray(value) : typeof value === kind);

/**
 * What is wrong with a request's params (an object, or left out) for its method, as
 * `params.<member>: <problem>`, or null. Methods not listed are left to the SDK.
 */
export function paramsProblem(method: string, params: Record<string, unknown> | undefined): string | null {
  if (!Object.hasOwn(MEMBERS, method)) return null;
  const members = MEMBERS[method] as Readonly<Record<string, Member>>;
  const given = params ?? {};
  const unknown = Object.keys(given).find((key) => !Object.hasOwn(members, key));
  if (unknown !== undefined) return `params: unknown member "${unknown.slice(0, 64)}" (${method} takes ${Object.keys(members).join(', ')})`;
  for (const [name, member] of Object.entries(members)) {
    if (given[name] === undefined) {
      if (member.required) return `params.${name}: required`;
    } else if (!isKind(given[name], member.kind)) return `params.${name}: must be ${member.kind === 'object' ? 'an object' : 'a string'}`;
  }
  return null;
}
