import { describe, expect, it } from 'vitest';
import { checkBody } from '../../src/mcp/json-rpc.ts';
import { BODY_MAX_DEPTH } from '../../src/lib/body-limits.ts';
import { paramsProblem } from '../../src/mcp/method-params.ts';

// The checks made on a parsed body before any message of it runs (json-rpc.ts, message-shape.ts,
// method-params.ts), as pure functions; test/mcp/mcp.test.ts sends the same over HTTP.

/** A value `levels` objects deep: `{a: {a: … 1}}`. */
const nested = (levels: number): unknown => (levels === 0 ? 1 : { a: nested(levels - 1) });
const call = (id: unknown, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'post_api_hand', arguments: args } });

describe('one message', () => {
  it.each([
    ['a __proto__ key in arguments', JSON.parse('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"__proto__":{"id":"1"}}}}'), 'Invalid params: tools/call params.arguments: the key "__proto__" is not allowed'],
    ['a prototype key in params', { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { prototype: 1 } }, 'Invalid params: tools/list params: the key "prototype" is not allowed'],
    ['a constructor key in a tool\'s query', call(7, { query: { constructor: 'x' } }), 'Invalid params: tools/call params.arguments.query: the key "constructor" is not allowed'],
  ])('refuses %s as invalid params with the message\'s id', (_label, message, text) => {
    expect(checkBody(message)).toEqual({ entries: [{ refused: { jsonrpc: '2.0', id: 7, error: { code: -32602, message: text } } }], batch: false });
  });

  it('leaves those keys in a tool\'s body to the record schema, as a direct call does', () => {
    const message = call(7, JSON.parse('{"body":{"a":{"__proto__":1},"constructor":{"prototype":{}}}}'));
    expect(checkBody(message)).toEqual({ entries: [{ message }], batch: false });
  });

  it('takes a tool body as deep as an HTTP body may be, and refuses one level more with the message\'s id', () => {
    const deepest = call(8, { body: nested(BODY_MAX_DEPTH + 1) }); // objects at body depths 0…32
    expect(checkBody(deepest)).toEqual({ entries: [{ message: deepest }], batch: false });
    const deeper = checkBody(call(8, { body: nested(BODY_MAX_DEPTH + 2) }));
    expect(deeper).toMatchObject({ entries: [{ refused: { id: 8, error: { code: -32600, message: expect.stringMatching(/^Invalid Request: the message is nested more than 35 levels deep/) } } }] });
  });

  it('refuses an id that is not a safe integer as an invalid request with id null (JSON parsing has rounded it)', () => {
    const body = JSON.parse('{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}');
    expect(checkBody(body)).toEqual({ entries: [{ refused: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: id must be a string or an integer of at most 2^53 - 1 in size' } } }], batch: false });
  });
});

describe('the params each method takes', () => {
  it.each([
    ['tools/call', {}, 'params.name: required'],
    ['tools/call', undefined, 'params.name: required'],
    ['tools/call', { name: 5 }, 'params.name: must be a string'],
    ['tools/call', { name: 'x', arguments: [] }, 'params.arguments: must be an object'],
    ['tools/call', { name: 'x', argument: { id: 'a' } }, 'params: unknown member "argument" (tools/call takes name, arguments, _meta)'],
    ['tools/call', { name: 'x', task: {} }, 'params: unknown member "task" (tools/call takes name, arguments, _meta)'],
    ['tools/list', { cursr: 'x' }, 'params: unknown member "cursr" (tools/list takes cursor, _meta)'],
    ['tools/list', { cursor: 1 }, 'params.cursor: must be a string'],
    ['resources/read', {}, 'params.uri: required'],
    ['ping', { extra: 1 }, 'params: unknown member "extra" (ping takes _meta)'],
  ])('%s with %j: %s', (method, params, problem) => {
    expect(paramsProblem(method, params)).toBe(problem);
  });

  it.each([
    ['tools/call', { name: 'x', arguments: {}, _meta: { progressToken: 1 } }],
    ['tools/list', undefined],
    ['initialize', { protocolVersion: '2025-11-25', anything: 1 }],
    ['notifications/initialized', { anything: 1 }],
  ])('takes %s with %j', (method, params) => {
    expect(paramsProblem(method, params)).toBeNull();
  });
});

describe('a batch', () => {
  it('refuses each invalid message in its place, with its id when it has one, and keeps the others to run', () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const note = { jsonrpc: '2.0', method: 'notifications/initialized' };
    const checked = checkBody([ping, 1, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: {} }, note, { jsonrpc: '2.0', id: 3, method: 'ping', extra: 1 }]);
    expect(checked).toEqual({
      batch: true,
      entries: [
        { message: ping },
        { refused: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: message 1: a message must be a JSON object' } } },
        { refused: { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Invalid params: message 2: tools/call params.name: required' } } },
        { message: note },
        { refused: { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request: message 4: unknown member "extra": a request has only jsonrpc, id, method, params' } } },
      ],
    });
  });

  it.each([
    ['empty', [], 'Invalid Request: empty batch'],
    ['a repeated id, even on a message refused otherwise', [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 }], 'Invalid Request: message 1: id 1 is already the id of message 0; each request of a batch needs its own id'],
    ['initialize', [{ jsonrpc: '2.0', id: 1, method: 'initialize' }, 5], 'Invalid Request: message 0: initialize must be sent alone, not in a batch (MCP lifecycle)'],
  ])('is refused whole when %s', (_label, body, message) => {
    expect(checkBody(body)).toEqual({ error: { jsonrpc: '2.0', id: null, error: { code: -32600, message } } });
  });
});
