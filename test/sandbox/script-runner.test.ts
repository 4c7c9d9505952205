import { describe, expect, it } from 'vitest';
import { checkScript, runScript, ScriptCompileError } from '../../src/sandbox/script-runner.ts';

// The cron script sandbox on its own: one isolate per run, console output kept, every way a run can
// end reported as a result (never a throw), and nothing left of one run in the next.
const limits = { memoryMb: 16, timeoutMs: 500 };

describe('runScript', () => {
  it.each([
    ['a value', 'async function run() { return {a: [1, "x"]}; }', { ok: true, value: '{"a":[1,"x"]}', error: null }],
    ['no value', 'async function run() {}', { ok: true, value: 'null', error: null }],
    ['a throw', 'async function run() { throw new Error("bad"); }', { ok: false, value: null, error: 'bad' }],
    ['a thrown string', 'async function run() { throw "plain"; }', { ok: false, value: null, error: 'plain' }],
    ['a throw at the top level', 'throw new Error("early"); async function run() {}', { ok: false, value: null, error: 'early' }],
    ['no run()', 'const x = 1;', { ok: false, value: null, error: 'The code must define async function run()' }],
    ['a top-level endless loop', 'for (;;) {} async function run() {}', { ok: false, value: null, error: 'The run exceeded its time limit of 500 ms' }],
    ['an unsettled promise', 'async function run() { await new Promise(() => {}); }', { ok: false, value: null, error: 'The run exceeded its time limit of 500 ms' }],
  ])('reports %s', async (_label, code, expected) => {
    expect(await runScript(code, limits)).toMatchObject(expected);
  });

  it('keeps console output, with levels, and nothing survives into the next run', async () => {
    const first = await runScript('globalThis.seen = 1; async function run() { console.log("a", 1, {b: 2}); console.error("oops"); }', limits);
    expect(first.logs).toEqual(['a 1 {"b":2}', '[error] oops']);
    const second = await runScript('async function run() { return typeof globalThis.seen; }', limits);
    expect(second.value).toBe('"undefined"');
  });

  it('has no WebAssembly: its memories are allocated beyond the isolate\'s memory limit', async () => {
    expect((await runScript('async function run() { return typeof WebAssembly + typeof globalThis.WebAssembly; }', limits)).value).toBe('"undefinedundefined"');
    const bomb = await runScript('async function run() { const m = new WebAssembly.Memory({ initial: 1600 }); return m.buffer.byteLength; }', limits);
    expect(bomb).toMatchObject({ ok: false, error: 'WebAssembly is not defined' });
  });

  it('fails a run whose result cannot be stored as JSON, saying why', async () => {
    const result = await runScript('async function run() { const a = {}; a.a = a; return a; }', limits);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/^The result cannot be stored as JSON: .*circular/i);
  });

  it('a memory bomb ends the run, not the process', async () => {
    const result = await runScript('async function run() { const a = []; for (;;) a.push("x".repeat(1e5) + Math.random()); }', limits);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/memory limit of 16 MB|time limit/);
    expect((await runScript('async function run() { return 7; }', limits)).value).toBe('7');
  });
});

describe('checkScript', () => {
  it.each([
    ['async function run() {', /does not compile/],
    ['function notRun() {}', /must define async function run\(\)/],
  ])('refuses %j', (code, message) => {
    expect(() => checkScript(code)).toThrow(ScriptCompileError);
    expect(() => checkScript(code)).toThrow(message);
  });

  it('accepts a script defining run', () => {
    expect(() => checkScript('const run = async () => 1;')).not.toThrow();
  });
});
