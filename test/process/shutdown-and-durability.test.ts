import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, cleanupServerProcesses, makeDataDir, startServerProcess } from '../helpers/server-process.ts';

// Every test starts its own processes on its own DATA_DIR, so they can run side by side.
afterAll(cleanupServerProcesses);

interface Outcome {
  status?: number;
  error?: string;
}

interface Login {
  /** Resolves once the request bytes sent so far have been handed to the kernel. */
  written: Promise<void>;
  /** Sends what was held back (nothing, or the last byte of the body). */
  finish(): void;
  done: Promise<Outcome>;
}

/**
 * POST /api/auth/login on a connection of its own (no keep-alive agent); with `holdLastByte`
 * the body's last byte is kept back until finish(). The outcome is the status, or the socket
 * error (ECONNRESET, socket hang up) when the server dropped the connection.
 */
function login(url: string, body: unknown, holdLastByte: boolean): Login {
  const text = JSON.stringify(body);
  let written!: () => void;
  const writtenPromise = new Promise<void>((resolve) => (written = resolve));
  const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) };
  const req = request(`${url}/api/auth/login`, { method: 'POST', agent: false, headers });
  const done = new Promise<Outcome>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode as number }));
      res.on('error', (error) => resolve({ error: error.message }));
    });
    req.on('error', (error) => {
      written();
      resolve({ error: `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}` });
    });
  });
  if (holdLastByte) {
    req.write(text.slice(0, -1), () => written());
    req.flushHeaders();
    return { written: writtenPromise, finish: () => req.end(text.slice(-1)), done };
  }
  req.end(text, () => written());
  return { written: writtenPromise, finish: () => undefined, done };
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.concurrent('shutdown', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s makes the process log it and exit 0', async (signal) => {
    const server = await startServerProcess();
    expect(await server.stop(signal)).toBe(0);
    expect(server.output()).toContain(`${signal} received`);
  });

  it('requests in flight at SIGTERM all complete with 200 or 401, none is reset, and the process then exits 0', async () => {
    // 10 rounds: each login spends tens of milliseconds in bcrypt, blocking the server.
    const server = await startServerProcess({ env: { BCRYPT_ROUNDS: '10' } });
    const cases = [
      { login: 'admin', password: ADMIN_PASSWORD, expected: 200 },
      { login: 'nobody-1', password: 'wrong-password', expected: 401 },
    ].flatMap((c) => [false, false, true].map((holdLastByte) => ({ ...c, holdLastByte })));
    const logins = cases.map(({ login: name, password, holdLastByte }) => login(server.url, { login: name, password }, holdLastByte));
    await Promise.all(logins.map((l) => l.written));
    // Connections are accepted in order and ready sockets read in one pass: once a request on
    // a newer connection is answered, every login has been received (the held-back ones are
    // still waiting for their last byte).
    expect((await fetch(`${server.url}/api/health`, { headers: { connection: 'close' } })).status).toBe(200);

    const exit = server.stop('SIGTERM');
    await waitFor(() => server.output().includes('SIGTERM received'), 5000);
    for (const l of logins) l.finish();
    const outcomes = await Promise.all(logins.map((l) => l.done));
    expect(await exit).toBe(0);
    expect(outcomes.map((o) => o.error ?? o.status)).toEqual(cases.map((c) => c.expected));
  });
});

describe.concurrent('durability', () => {
  it('a user acknowledged with 201 just before kill -9 is there after a restart on the same DATA_DIR', async () => {
    const dataDir = makeDataDir();
    const first = await startServerProcess({ dataDir, env: { SQLITE_SYNCHRONOUS: 'FULL' } });
    const { accessToken } = await first.login();
    const created = await first.api('POST', '/api/users', { token: accessToken, body: { login: 'survivor', password: 'survivor-password-1' } });
    expect(created.status).toBe(201);
    await first.kill9();

    const second = await startServerProcess({ dataDir, env: { SQLITE_SYNCHRONOUS: 'FULL' } });
    const session = await second.login('survivor', 'survivor-password-1');
    expect(session.user._id).toBe(created.body.data._id);
    expect(await second.stop()).toBe(0);
  });
});
