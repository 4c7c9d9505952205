import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProjectSync } from '../../src/project/sync.ts';
import { CRON_REVISION } from '../../src/services/cron-jobs.ts';
import { Revisions } from '../../src/services/revisions.ts';
import { WEBHOOK_REVISION } from '../../src/services/webhooks.ts';
import type { TestServer } from '../helpers/test-server.ts';
import { adminCall, endpointYaml, sleep, syncServers, syncTempDir, waitFor, watching } from './sync-helpers.ts';

/**
 * The file sync when a person saves a file at the moment the server writes an API change back
 * (src/project/sync.ts), and when the files cannot be applied for a while. A real server and a
 * real ProjectSync on a temp directory; the only thing arranged is *when* the person's save
 * happens: right after the write-back has read the directory, before it writes (the moment an
 * editor's save could land in on a busy machine).
 */
const servers = syncServers();
const call = adminCall;
const syncs: ProjectSync[] = [];
afterAll(async () => {
  await Promise.all(syncs.splice(0).map((sync) => sync.close()));
});

const read = (dir: string, rel: string): string => readFileSync(join(dir, rel), 'utf8');
async function endpointAt(t: TestServer, path: string): Promise<any> {
  const list = await call(t, 'GET', `/api/endpoints?limit=100&search=${encodeURIComponent(path)}`);
  return list.find((endpoint: any) => endpoint.path === path);
}

/** A directory with /api/a and /api/b, synced by a ProjectSync whose next write-back runs `save` after reading the files. */
async function syncedProject(): Promise<{ t: TestServer; dir: string; duringNextWriteBack(save: () => void): Promise<void> }> {
  const dir = syncTempDir();
  mkdirSync(join(dir, 'endpoints'));
  for (const name of ['a', 'b']) writeFileSync(join(dir, 'endpoints', `${name}.yaml`), endpointYaml(`/api/${name}`));
  const t = await servers.start({});
  const services = t.server.services;
  const revisions = new Revisions(services.store, 0);
  const current = async (): Promise<number> => (await revisions.current('endpoints')) + (await revisions.current(CRON_REVISION)) + (await revisions.current(WEBHOOK_REVISION));
  const armed: { base: number; seen: number; save: (() => void) | null } = { base: Infinity, seen: 0, save: null };
  const sync = new ProjectSync({
    dir,
    services,
    status: services.projectStatus,
    pollMs: 50,
    // The poll reads the revision (1st), the write-back reads the files, then the revision (2nd): the save lands there.
    storeRevision: async () => {
      const revision = await current();
      if (armed.save && revision > armed.base && ++armed.seen === 2) {
        const save = armed.save;
        armed.save = null;
        save();
      }
      return revision;
    },
  });
  syncs.push(sync);
  await sync.start();
  expect(await endpointAt(t, '/api/a')).toBeDefined();
  return {
    t,
    dir,
    async duringNextWriteBack(save) {
      Object.assign(armed, { base: await current(), seen: 0, save });
    },
  };
}

describe('a file saved while the server writes an API change back', () => {
  it('an edit to the file being written back is neither overwritten nor taken for the server\'s own write: it is applied', async () => {
    const { t, dir, duringNextWriteBack } = await syncedProject();
    const edited = endpointYaml('/api/a', { name: 'Edited by hand' });
    await duringNextWriteBack(() => writeFileSync(join(dir, 'endpoints/a.yaml'), edited));
    const id = (await endpointAt(t, '/api/a'))._id;
    await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'changed through the API' });
    // The file wins, as for any file edited since the last sync: the API's change is not written into it.
    await waitFor('the edit applied', async () => (await endpointAt(t, '/api/a')).name === 'Edited by hand', 5000);
    await sleep(300);
    expect(read(dir, 'endpoints/a.yaml')).toBe(edited);
    const a = await endpointAt(t, '/api/a');
    expect(a.name).toBe('Edited by hand');
    expect(a.description ?? '').toBe('');
  });

  it('an edit to another file saved meanwhile is applied, and the API change is written back', async () => {
    const { t, dir, duringNextWriteBack } = await syncedProject();
    await duringNextWriteBack(() => writeFileSync(join(dir, 'endpoints/b.yaml'), endpointYaml('/api/b', { name: 'B by hand' })));
    const id = (await endpointAt(t, '/api/a'))._id;
    await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'changed through the API' });
    await waitFor('the edit applied', async () => (await endpointAt(t, '/api/b')).name === 'B by hand', 5000);
    await waitFor('the API change written back', () => read(dir, 'endpoints/a.yaml').includes('description: changed through the API'), 5000);
    expect((await endpointAt(t, '/api/a')).description).toBe('changed through the API');
  });

  it('a file edited while the API deletes its definition stays, and its definition is back', async () => {
    const { t, dir, duringNextWriteBack } = await syncedProject();
    const edited = endpointYaml('/api/a', { name: 'Kept by hand' });
    await duringNextWriteBack(() => writeFileSync(join(dir, 'endpoints/a.yaml'), edited));
    const id = (await endpointAt(t, '/api/a'))._id;
    await call(t, 'DELETE', `/api/endpoints/${id}`);
    await waitFor('the file applied again', async () => (await endpointAt(t, '/api/a'))?.name === 'Kept by hand', 5000);
    await sleep(300);
    expect(existsSync(join(dir, 'endpoints/a.yaml'))).toBe(true);
    expect(read(dir, 'endpoints/a.yaml')).toBe(edited);
  });
});

describe('files that cannot be applied', () => {
  it('an API change while a file needs an unset variable is tried once, not at every poll; fixing the file applies it', async () => {
    const dir = syncTempDir();
    mkdirSync(join(dir, 'endpoints'), { recursive: true });
    writeFileSync(join(dir, 'endpoints/a.yaml'), endpointYaml('/api/a'));
    writeFileSync(join(dir, 'endpoints/b.yaml'), endpointYaml('/api/b'));
    const t = await servers.start(watching(dir));
    const status = (): Promise<any> => call(t, 'GET', '/api/project/status');
    writeFileSync(join(dir, 'endpoints/a.yaml'), endpointYaml('/api/a', { description: '${env:DYN_RACES_UNSET}' }));
    await waitFor('the failed apply in the status', async () => (await status()).lastReconcile?.ok === false);
    const id = (await endpointAt(t, '/api/b'))._id;
    await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'changed through the API' });
    await waitFor('the API change written back', () => read(dir, 'endpoints/b.yaml').includes('description: changed through the API'));
    await sleep(500);
    const settled = (await status()).lastReconcile.at;
    // Polls run every 200 ms: a loop would have reconciled (and logged a warning) several times by now.
    await sleep(1200);
    const later = await status();
    expect(later.lastReconcile.at).toBe(settled);
    expect(later.lastReconcile.ok).toBe(false);
    expect(later.lastReconcile.error).toContain('DYN_RACES_UNSET');
    writeFileSync(join(dir, 'endpoints/a.yaml'), endpointYaml('/api/a', { description: 'fixed' }));
    await waitFor('the fixed file applied', async () => (await status()).lastReconcile.ok === true);
    expect((await endpointAt(t, '/api/a')).description).toBe('fixed');
    expect((await endpointAt(t, '/api/b')).description).toBe('changed through the API');
  });
});

describe('text that reads like a placeholder, set through the API', () => {
  it('is written back and exported escaped ($${…}), so it stays the same text after the files are applied and after an import', async () => {
    const dir = syncTempDir();
    mkdirSync(join(dir, 'endpoints'), { recursive: true });
    writeFileSync(join(dir, 'endpoints/a.yaml'), endpointYaml('/api/a'));
    const t = await servers.start(watching(dir));
    const text = 'Set ${env:PATH} and $${env:DYN_X} here';
    const id = (await endpointAt(t, '/api/a'))._id;
    await call(t, 'PUT', `/api/endpoints/${id}`, { description: text });
    await waitFor('the change written back', () => read(dir, 'endpoints/a.yaml').includes('description:'));
    expect(read(dir, 'endpoints/a.yaml')).toContain('description: Set $${env:PATH} and $$${env:DYN_X} here\n');
    // A reconcile of the directory (another file added) applies the escaped text as the same text.
    writeFileSync(join(dir, 'endpoints/b.yaml'), endpointYaml('/api/b'));
    await waitFor('the new file applied', async () => (await endpointAt(t, '/api/b')) !== undefined);
    const status = await call(t, 'GET', '/api/project/status');
    expect(status.lastReconcile.ok).toBe(true);
    expect((await endpointAt(t, '/api/a')).description).toBe(text);
    const bundle = await call(t, 'GET', '/api/project/export?format=json');
    expect(bundle.endpoints.find((e: any) => e.path === '/api/a').description).toBe('Set $${env:PATH} and $$${env:DYN_X} here');
    // The export imported elsewhere gives the same text.
    const other = await servers.start({});
    await call(other, 'POST', '/api/project/import?mode=merge', bundle);
    expect((await endpointAt(other, '/api/a')).description).toBe(text);
  });
});

describe('files whose apply failed', () => {
  it('a file deleted meanwhile is not written back by an API change of its definition, and the fix applies the deletion', async () => {
    const dir = syncTempDir();
    mkdirSync(join(dir, 'endpoints'));
    for (const name of ['a', 'b', 'c']) writeFileSync(join(dir, 'endpoints', `${name}.yaml`), endpointYaml(`/api/${name}`));
    const t = await servers.start(watching(dir));
    const status = (): Promise<any> => call(t, 'GET', '/api/project/status');
    const id = (await endpointAt(t, '/api/c'))._id;
    rmSync(join(dir, 'endpoints/c.yaml'));
    writeFileSync(join(dir, 'endpoints/a.yaml'), endpointYaml('/api/a', { description: '${env:DYN_RACES_UNSET}' }));
    await waitFor('the failed apply in the status', async () => (await status()).lastReconcile?.ok === false);
    await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'changed through the API' });
    await sleep(800);
    expect(existsSync(join(dir, 'endpoints/c.yaml'))).toBe(false);
    writeFileSync(join(dir, 'endpoints/a.yaml'), endpointYaml('/api/a', { description: 'fixed' }));
    await waitFor('the fixed files applied', async () => (await status()).lastReconcile.ok === true);
    expect(await endpointAt(t, '/api/c')).toBeUndefined();
    expect(existsSync(join(dir, 'endpoints/c.yaml'))).toBe(false);
  });

  it('a directory emptied of definitions is not written into by an API change: the refusal stands and nothing is deleted', async () => {
    const dir = syncTempDir();
    mkdirSync(join(dir, 'endpoints'));
    for (const name of ['a', 'b']) writeFileSync(join(dir, 'endpoints', `${name}.yaml`), endpointYaml(`/api/${name}`));
    const t = await servers.start(watching(dir));
    const status = (): Promise<any> => call(t, 'GET', '/api/project/status');
    for (const name of ['a', 'b']) rmSync(join(dir, 'endpoints', `${name}.yaml`));
    await waitFor('the refusal in the status', async () => /would delete every definition/.test((await status()).lastReconcile?.error ?? ''));
    await call(t, 'POST', '/api/endpoints', { name: 'During empty', path: '/api/during', method: 'GET', accessType: 'public', schema: [] });
    await sleep(800);
    expect(readdirSync(join(dir, 'endpoints'))).toEqual([]);
    expect((await status()).lastReconcile.ok).toBe(false);
    for (const path of ['/api/a', '/api/b', '/api/during']) expect(await endpointAt(t, path), path).toBeDefined();
  });
});
