import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { errorHandler } from '../../src/http/middleware/error-handler.ts';
import { DuplicateKeyError, StoreError } from '../../src/store/types.ts';
import type { AuditEntry, AuditLog } from '../../src/services/audit-log.ts';
import type { DynState } from '../../src/http/state.ts';

// A real Koa app on an ephemeral port whose routes fail in each way the renderer handles.
const logLines: string[] = [];
const audited: AuditEntry[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  const app = new Koa<DynState>();
  app.silent = true;
  const audit = { enqueue: (entry: AuditEntry) => audited.push(entry) } as unknown as AuditLog;
  app.use(errorHandler(createLogger('error', (line) => logLines.push(line)), audit, { recordRefused: async (call) => call.path === '/recorded/boom' }));
  app.use(async (ctx) => {
    ctx.state.clientIp = '127.0.0.1';
    const failures: Record<string, () => never> = {
      '/boom': () => {
        throw new Error('database password is hunter2');
      },
      '/recorded/boom': () => {
        throw new Error('failed inside a call the engine records');
      },
      '/app-error': () => {
        throw new AppError(422, 'Thing is wrong', { details: [{ field: 'thing', message: 'is wrong' }] });
      },
      '/duplicate': () => {
        throw new DuplicateKeyError('users', ['loginKey']);
      },
      '/busy': () => {
        throw new StoreError('busy', 'SQLITE_BUSY');
      },
    };
    failures[ctx.path]?.();
    ctx.body = { success: true };
  });
  server = createServer(app.callback()).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the error renderer', () => {
  it('hides an unexpected error behind a generic 500 and logs its stack', async () => {
    const res = await fetch(`${base}/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ success: false, error: 'Internal server error' });
    expect(text).not.toContain('hunter2');
    expect(logLines.join('\n')).toContain('hunter2');
    expect(logLines.join('\n')).toContain('at ');
    expect(audited.at(-1)).toMatchObject({ action: 'error', statusCode: 500, path: '/boom' });
  });

  it.each([
    ['/app-error', 422, { success: false, error: 'Thing is wrong', details: [{ field: 'thing', message: 'is wrong' }] }],
    ['/duplicate', 409, { success: false, error: 'A record with these values already exists' }],
    ['/busy', 503, { success: false, error: 'The database is busy; try again' }],
  ])('renders %s as %i with a client-safe message', async (path, status, body) => {
    const res = await fetch(base + path);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual(body);
  });

  it('leaves the audit entry of a failure to the engine when it recorded the call as its definition\'s', async () => {
    const before = audited.length;
    const res = await fetch(`${base}/recorded/boom`);
    expect(res.status).toBe(500);
    expect(audited.length).toBe(before);
  });
});
