import { createHash } from 'node:crypto';
import { existsSync, linkSync, readFileSync, realpathSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * One watcher per project directory on a machine. Two instances that both sync one directory
 * with the store race each other (one's reconcile of files it read a moment earlier can restore
 * what the other just deleted), so an instance claims the directory before it watches: a lock
 * file in the system's temporary directory, named after the directory's real path, holding the
 * claimant's pid. A claim whose process is gone (a crash, a kill -9) is taken over at once.
 * Instances on other machines or in containers with a temporary directory of their own do not
 * see each other's claims.
 */
export type WatchClaim = { claimed: true; release(): void } | { claimed: false; heldBy: number; file: string };

interface LockContent {
  pid: number;
  dir: string;
  since: string;
}

export function lockFileOf(dir: string): string {
  const real = existsSync(dir) ? realpathSync(dir) : resolve(dir);
  return join(tmpdir(), `dyn-watch-${createHash('sha256').update(real).digest('hex').slice(0, 24)}.json`);
}

export function claimWatch(dir: string): WatchClaim {
  const file = lockFileOf(dir);
  const mine: LockContent = { pid: process.pid, dir: resolve(dir), since: new Date().toISOString() };
  // Written whole under a name of our own, then linked into place: the link fails when a claim
  // exists, and a claim is never seen half-written.
  const draft = `${file}.${process.pid}.draft`;
  writeFileSync(draft, JSON.stringify(mine), { mode: 0o600 });
  try {
    // A few rounds: another process may take over the same stale claim between our steps.
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(draft, file);
        return { claimed: true, release: () => release(file) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const stale = staleOrHeld(file);
      if (stale !== true) return { claimed: false, heldBy: stale, file };
    }
  } finally {
    unlinkSync(draft);
  }
  throw new Error(`could not claim ${file} for watching ${dir}`);
}

/**
 * True once a claim that no live process of another holds is out of the way (or gone already);
 * else the pid of the process that holds it.
 */
function staleOrHeld(file: string): true | number {
  const holder = readHolder(file);
  if (holder === undefined) return true; // removed meanwhile
  if (holder !== null && holder.pid !== process.pid && isAlive(holder.pid)) return holder.pid;
  // Ours from before an exec, a dead process's, or unreadable: moved aside (only one process
  // can move it), so that the next link claims the directory.
  const aside = `${file}.${process.pid}.stale`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
  // Another process may have replaced the stale claim with its own in between: put that back.
  const moved = readHolder(aside);
  if (moved && moved.pid !== holder?.pid && moved.pid !== process.pid && isAlive(moved.pid)) {
    try {
      linkSync(aside, file);
    } catch {
      // a third claim is in place already
    }
    unlinkSync(aside);
    return moved.pid;
  }
  unlinkSync(aside);
  return true;
}

/** The claim's content; null when it cannot be read as one, undefined when the file is gone. */
function readHolder(file: string): LockContent | null | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockContent>;
    return typeof parsed.pid === 'number' ? (parsed as LockContent) : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function release(file: string): void {
  try {
    if (readHolder(file)?.pid === process.pid) unlinkSync(file);
  } catch {
    // Already gone, or the temporary directory is read-only now: a claim whose process has ended is stale anyway.
  }
}
