import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockFileOf } from '../../src/project/watch-lock.ts';
import { cleanupServerProcesses, JWT_REFRESH_SECRET, JWT_SECRET, makeDataDir, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { snapshot } from './helpers.ts';
import { copyOfSampleProject, endpointYaml, removeSyncDirs, sleep, waitFor } from './sync-helpers.ts';

/**
 * Two `dynctl serve` processes on one DATA_DIR and one PROJECT_DIR, deployed as the README says:
 * exactly one with PROJECT_WATCH=on (it reads and writes the directory), the other with
 * PROJECT_WATCH=off (it only serves what the store holds).
 */
let writer: ServerProcess;
let reader: ServerProcess;
let dir: string;
let writerToken: string;
let readerToken: string;

beforeAll(async () => {
  const dataDir = makeDataDir();
  dir = copyOfSampleProject();
  const env = { JWT_SECRET, JWT_REFRESH_SECRET, PROJECT_DIR: dir };
  writer = await startServerProcess({ dataDir, env: { ...env, PROJECT_WATCH: 'on' } });
  reader = await startServerProcess({ dataDir, env: { ...env, PROJECT_WATCH: 'off' } });
  [writerToken, readerToken] = await Promise.all([writer.login().then((s) => s.accessToken), reader.login().then((s) => s.accessToken)]);
});

afterAll(async () => {
  const started = [writer, reader].filter((server): server is ServerProcess => server !== undefined);
  const codes = await Promise.all(started.map((server) => server.stop()));
  await cleanupServerProcesses();
  removeSyncDirs();
  expect(codes).toEqual(codes.map(() => 0));
});

const served = async (on: ServerProcess, path: string): Promise<number> => (await on.api('GET', path)).status;

describe('two instances on one store and one project directory', () => {
  it('the instance with PROJECT_WATCH=off serves the definitions the watching instance applied from the files', async () => {
    expect(await served(reader, '/api/shop/products')).toBe(200);
    expect(await served(reader, '/api/shop/categories')).toBe(200);
    const status = await reader.api('GET', '/api/project/status', { token: readerToken });
    expect(status.body.data).toEqual({ dir, watching: false, lastReconcile: null, problems: [] });
    expect((await writer.api('GET', '/api/project/status', { token: writerToken })).body.data).toMatchObject({ watching: true, lastReconcile: { ok: true, summary: { create: 8 } } });
    expect(writer.output()).toMatch(/project: applied 8 create, 0 update, 0 delete/);
    expect(reader.output()).not.toMatch(/project:/);
  });

  it('a file change is applied by the watching instance and served by both', async () => {
    writeFileSync(join(dir, 'endpoints', 'two.yaml'), endpointYaml('/api/two/items'));
    const delay = await waitFor('served by the PROJECT_WATCH=off instance', async () => (await served(reader, '/api/two/items')) === 200, 3000);
    console.log(`project sync: a new file was served by the other instance after ${delay} ms`);
    expect(await served(writer, '/api/two/items')).toBe(200);
  });

  it('an API change on the watching instance is written to the directory', async () => {
    const res = await writer.api('POST', '/api/endpoints', { token: writerToken, body: { name: 'From writer', path: '/api/two/writer', method: 'GET', accessType: 'public', schema: {} } });
    expect(res.status, res.text).toBe(201);
    await waitFor('the file written', () => existsSync(join(dir, 'endpoints', 'two-writer-get.yaml')));
    expect(readFileSync(join(dir, 'endpoints', 'two-writer-get.yaml'), 'utf8')).toContain('path: /api/two/writer\n');
    expect(await served(reader, '/api/two/writer')).toBe(200);
  });

  it('an API change made on the PROJECT_WATCH=off instance is written back by the watching one', async () => {
    const before = snapshot(dir);
    const res = await reader.api('POST', '/api/endpoints', { token: readerToken, body: { name: 'From reader', path: '/api/two/reader', method: 'GET', accessType: 'public', schema: {} } });
    expect(res.status, res.text).toBe(201);
    expect(await served(writer, '/api/two/reader')).toBe(200);
    // The watching instance notices the store's endpoints revision change and writes the file.
    let added: string[] = [];
    for (let i = 0; i < 50 && added.length === 0; i++) {
      await sleep(100);
      added = Object.keys(snapshot(dir)).filter((file) => !(file in before));
    }
    expect(added).toHaveLength(1);
    expect(readFileSync(join(dir, added[0] as string), 'utf8')).toContain('path: /api/two/reader');
  });
});

describe('a second watcher of one project directory', () => {
  const running = new Set<ServerProcess>();
  const start = async (dataDir: string): Promise<ServerProcess> => {
    const server = await startServerProcess({ dataDir, env });
    running.add(server);
    return server;
  };
  const env = { JWT_SECRET, JWT_REFRESH_SECRET, PROJECT_WATCH: 'on' };
  const watching = async (server: ServerProcess): Promise<boolean> => {
    const token = (await server.login()).accessToken;
    return (await server.api('GET', '/api/project/status', { token })).body.data.watching;
  };

  afterAll(async () => {
    await Promise.all([...running].map((server) => server.stop()));
  });

  it('serves without watching while another process watches it, and a claim whose process died is taken over', async () => {
    const dataDir = makeDataDir();
    const claim = lockFileOf(join(dataDir, 'project'));
    const first = await start(dataDir);
    const second = await start(dataDir);
    expect(second.output()).toContain(`is watched by another dyn process on this machine (pid ${first.pid}); this one serves without watching it`);
    expect(await watching(first)).toBe(true);
    expect(await watching(second)).toBe(false);

    // Stopped, the watcher gives the directory up; the next start watches it.
    for (const server of [second, first]) {
      running.delete(server);
      expect(await server.stop()).toBe(0);
    }
    expect(existsSync(claim)).toBe(false);
    const third = await start(dataDir);
    expect(await watching(third)).toBe(true);

    // Killed, it leaves its claim behind, which the next start takes over at once.
    running.delete(third);
    await third.kill9();
    expect(JSON.parse(readFileSync(claim, 'utf8'))).toMatchObject({ pid: third.pid });
    const fourth = await start(dataDir);
    expect(fourth.output()).not.toContain('is watched by another dyn process');
    expect(await watching(fourth)).toBe(true);
  });

  it('watches unclaimed, with a warning, where no claim can be written', async () => {
    const server = await startServerProcess({ dataDir: makeDataDir(), env: { ...env, TMPDIR: join(makeDataDir(), 'no-such-dir') } });
    running.add(server);
    expect(server.output()).toContain('could not claim');
    expect(await watching(server)).toBe(true);
  });
});
