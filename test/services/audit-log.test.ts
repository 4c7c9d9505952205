import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { AuditLog } from '../../src/services/audit-log.ts';
import type { Store } from '../../src/store/types.ts';
import { openEmbeddedTestStore } from '../store/open-stores.ts';
import type { OpenedStore } from '../store/conformance.ts';

/**
 * The audit log's buffered entries on a real embedded store. The append worker runs at the
 * lowest CPU priority, so on busy cores it may fall behind; the store here is the real one with
 * its background writes held at a gate, which is what a starved worker looks like from the
 * request thread.
 */
describe('audit log: entries waiting for a writer that is behind', () => {
  let opened: OpenedStore;
  let open: () => void;
  let gated: Store;
  let calls: Array<'worker' | 'inline'>;
  const logger = createLogger('silent');
  const stored = () => opened.store.collection('logs').count({});

  beforeEach(async () => {
    opened = await openEmbeddedTestStore('dyn-audit-');
    const gate = new Promise<void>((resolve) => (open = resolve));
    calls = [];
    const store = opened.store;
    gated = {
      ...store,
      appendFlat: async (collection, docs, options) => {
        calls.push(options?.inline ? 'inline' : 'worker');
        if (!options?.inline) await gate;
        return store.appendFlat(collection, docs, options);
      },
    };
  });
  afterEach(async () => {
    open();
    await opened.cleanup();
  });

  it('writes a batch itself once four wait, so what waits stays bounded, and loses no entry', async () => {
    const audit = new AuditLog(gated, logger);
    // Six batches of a thousand (a batch is handed over when the buffer fills): the first is held
    // at the gate, three more wait behind it, and the fifth and sixth are written at once.
    for (let i = 0; i < 6000; i++) audit.enqueue({ action: 'api_call', message: `m${i}`, source: 'endpoint', method: 'GET', path: `/api/x/${i}`, statusCode: 200 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect([...calls].sort()).toEqual(['inline', 'inline', 'worker']);
    expect(await stored()).toBe(2000);

    open();
    await audit.flush();
    expect([...calls].sort()).toEqual(['inline', 'inline', 'worker', 'worker', 'worker', 'worker']);
    expect(await stored()).toBe(6000);
    const messages = (await opened.store.collection('logs').find({})).map((doc) => doc.message);
    expect(new Set(messages)).toEqual(new Set(Array.from({ length: 6000 }, (_, i) => `m${i}`)));
  });

  it('a flush resolves only when the batches waiting before it and the one written at once are stored', async () => {
    const audit = new AuditLog(gated, logger);
    for (let i = 0; i < 5000; i++) audit.enqueue({ action: 'api_call', message: `m${i}`, source: 'endpoint' });
    audit.enqueue({ action: 'api_call', message: 'last', source: 'endpoint' });
    let flushed = false;
    const flushing = audit.flush().then(() => (flushed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The fifth batch and the last entry were written at once; the first four still wait.
    expect(await stored()).toBe(1001);
    expect(flushed).toBe(false);
    open();
    await flushing;
    expect(await stored()).toBe(5001);
  });

  it('hands every batch to the writer while it keeps up', async () => {
    open();
    const audit = new AuditLog(gated, logger);
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 10; i++) audit.enqueue({ action: 'api_call', message: `r${round} m${i}`, source: 'endpoint' });
      await audit.flush();
    }
    expect(calls).toEqual(Array.from({ length: 6 }, () => 'worker'));
    expect(await stored()).toBe(60);
  });
});
