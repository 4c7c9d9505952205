import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedStore } from './conformance.ts';
import { openEmbeddedTestStore } from './open-stores.ts';

/**
 * The embedded store's append worker (the audit log's writer) lowers its own thread to the
 * lowest CPU priority on Linux, and only its own: the request thread keeps the process's.
 * Read from /proc, as `ps -L -o tid,ni,comm` shows it.
 */
const linux = process.platform === 'linux';
if (!linux) console.log('append worker priority: skipped (a thread of its own priority is Linux only)');

interface ThreadInfo {
  tid: number;
  name: string;
  nice: number;
}

function threads(): ThreadInfo[] {
  return readdirSync('/proc/self/task').map((tid) => {
    // Fields after the command name: state is the 3rd field of stat, nice the 19th.
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { tid: Number(tid), name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(), nice: Number(fields[16]) };
  });
}

describe.skipIf(!linux || getPriority() === 19)('embedded store: the append worker yields the CPU to requests', () => {
  let opened: OpenedStore;
  beforeAll(async () => {
    opened = await openEmbeddedTestStore('dyn-priority-');
  });
  afterAll(async () => {
    await opened.cleanup();
  });

  it('runs at nice 19 once started, while the request thread keeps its priority', async () => {
    const own = getPriority();
    const before = threads();
    expect(before.filter((thread) => thread.nice === 19)).toEqual([]);

    await opened.store.appendFlat('logs', { fields: ['action', 'message'], dates: [], values: ['api_call', 'started the worker'] });

    const after = threads();
    const lowered = after.filter((thread) => thread.nice === 19);
    expect(lowered).toHaveLength(1);
    expect(lowered[0]!.name).toBe('WorkerThread');
    expect(before.some((thread) => thread.tid === lowered[0]!.tid)).toBe(false);
    expect(after.find((thread) => thread.tid === process.pid)?.nice).toBe(own);
    expect(await opened.store.collection('logs').count({})).toBe(1);
  });
});
