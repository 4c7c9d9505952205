import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/test-server.ts';

describe('audit log retention', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dyn-retention-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('removes entries older than logRetentionDays automatically at startup', async () => {
    const first = await startTestServer({}, dir);
    const logs = first.server.services.store.collection('logs');
    const old = new Date(Date.now() - 31 * 86_400_000);
    await logs.insertOne({ action: 'login', message: 'ancient', source: 'test', ip: null, userId: null, method: null, path: null, statusCode: null, createdAt: old });
    expect(await logs.count({ message: 'ancient' })).toBe(1);
    await first.close();

    const second = await startTestServer({}, dir);
    const token = await second.adminToken();
    let remaining = -1;
    for (let i = 0; i < 50 && remaining !== 0; i++) {
      const res = await second.api('GET', '/api/dashboard/logs?search=ancient', { token });
      remaining = res.body.meta.total;
      if (remaining !== 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(remaining).toBe(0);
    await second.close();
  });
});
