import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFiles } from './helpers.ts';
import { adminCall as call, sleep, syncServers, syncTempDir, waitFor, watching } from './sync-helpers.ts';

/**
 * A webhook secret changed through the API is not written back: the file keeps its placeholder
 * (README), whether the secret alone changed or other fields with it.
 */
process.env.DYN_HOOK_SYNC_SECRET = 'hook-secret-sync-1';
const { start, stop } = syncServers();

describe('the file sync of a webhook secret changed through the API', () => {
  it('keeps the placeholder line: a secret-only change writes nothing, another change keeps the line', async () => {
    const dir = syncTempDir();
    const text = '# yaml-language-server: $schema=https://dynctl.dev/schemas/webhook.schema.json\nname: items\nurl: https://1.1.1.1/items\nevents: [record.created]\nsecret: ${env:DYN_HOOK_SYNC_SECRET}\n';
    writeFiles(dir, { 'endpoints/items.yaml': 'name: Items\npath: /api/hook-secret/items\nmethod: GET\naccessType: public\nschema: {}\n', 'webhooks/items.yaml': text });
    const t = await start(watching(dir));
    try {
      const file = join(dir, 'webhooks/items.yaml');
      const created = await call(t, 'GET', '/api/webhooks/items');
      expect(created.secret).toBe('set');

      await call(t, 'PUT', `/api/webhooks/${created._id}`, { secret: 'typed-into-the-api' });
      // Polls go by (every 200 ms): nothing is written.
      await sleep(800);
      expect(readFileSync(file, 'utf8')).toBe(text);

      await call(t, 'PUT', `/api/webhooks/${created._id}`, { enabled: false });
      await waitFor('the write-back', () => readFileSync(file, 'utf8').includes('enabled: false'), 5000, 50);
      expect(readFileSync(file, 'utf8')).toBe(`${text}enabled: false\n`);
      expect(readFileSync(file, 'utf8')).not.toContain('typed-into-the-api');

      // The next apply of the file sets the placeholder's value again.
      writeFileSync(file, text);
      await waitFor('the file applied', async () => (await call(t, 'GET', `/api/webhooks/${created._id}`)).enabled === true, 5000, 50);
      expect(readFileSync(file, 'utf8')).toBe(text);
    } finally {
      await stop(t);
    }
  });
});
