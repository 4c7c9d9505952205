// Server resources for `GET /api/dashboard/system`: OS, CPU, memory, the data directory's disk,
// network addresses, this process and the store. Only facts a monitoring page shows: no
// environment, no configuration values, no hardware (MAC) addresses.
import { stat, statfs } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { COLLECTIONS } from '../store/collections.ts';
import type { Store } from '../store/types.ts';

export interface SystemInfo {
  os: { platform: string; type: string; release: string; arch: string; hostname: string; uptimeSeconds: number };
  cpu: { model: string; cores: number; loadAverage: [number, number, number] };
  memory: { totalBytes: number; freeBytes: number; usedBytes: number };
  disk: { path: string; totalBytes: number; freeBytes: number; availableBytes: number; usedBytes: number } | null;
  network: Array<{ interface: string; address: string; family: string; cidr: string | null; internal: boolean }>;
  process: { pid: number; nodeVersion: string; uptimeSeconds: number; memory: { rssBytes: number; heapUsedBytes: number; heapTotalBytes: number; externalBytes: number } };
  store: { kind: Store['kind']; sizeBytes: number | null };
  cronJobsActive: number;
  cronJobsTotal: number;
}

/** Files of the embedded store (see src/store/sqlite/sqlite-store.ts). */
const EMBEDDED_FILES = ['dyn.db', 'dyn.db-wal', 'dyn.db-shm'];

export class SystemInfoService {
  private readonly store: Store;
  private readonly dataDir: string;

  constructor(store: Store, dataDir: string) {
    this.store = store;
    this.dataDir = dataDir;
  }

  async info(): Promise<SystemInfo> {
    const cpus = os.cpus();
    const load = os.loadavg();
    const memory = process.memoryUsage();
    const [disk, storeSize, cronJobsTotal, cronJobsActive] = await Promise.all([this.disk(), this.storeSize(), this.cronJobs({}), this.cronJobs({ enabled: true })]);
    return {
      os: { platform: os.platform(), type: os.type(), release: os.release(), arch: os.arch(), hostname: os.hostname(), uptimeSeconds: Math.round(os.uptime()) },
      cpu: { model: cpus[0]?.model.trim() ?? 'unknown', cores: os.availableParallelism(), loadAverage: [load[0] ?? 0, load[1] ?? 0, load[2] ?? 0] },
      memory: { totalBytes: os.totalmem(), freeBytes: os.freemem(), usedBytes: os.totalmem() - os.freemem() },
      disk,
      network: networkAddresses(),
      process: {
        pid: process.pid,
        nodeVersion: process.version,
        uptimeSeconds: Math.round(process.uptime()),
        memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, heapTotalBytes: memory.heapTotal, externalBytes: memory.external },
      },
      store: { kind: this.store.kind, sizeBytes: storeSize },
      cronJobsActive,
      cronJobsTotal,
    };
  }

  private async disk(): Promise<SystemInfo['disk']> {
    try {
      const fs = await statfs(this.dataDir);
      const total = fs.blocks * fs.bsize;
      const free = fs.bfree * fs.bsize;
      return { path: this.dataDir, totalBytes: total, freeBytes: free, availableBytes: fs.bavail * fs.bsize, usedBytes: total - free };
    } catch {
      return null; // the data directory is not reachable (MongoDB deployments may have none)
    }
  }

  /** Bytes on disk of the embedded store's files; null for MongoDB (its size is the server's). */
  private async storeSize(): Promise<number | null> {
    if (this.store.kind !== 'embedded') return null;
    const sizes = await Promise.all(EMBEDDED_FILES.map((file) => stat(join(this.dataDir, file)).then((s) => s.size, () => 0)));
    return sizes.reduce((a, b) => a + b, 0);
  }

  private cronJobs(filter: Record<string, unknown>): Promise<number> {
    if (!COLLECTIONS.some((c) => c.name === 'cronjobs')) return Promise.resolve(0);
    return this.store.collection('cronjobs').count(filter);
  }
}

function networkAddresses(): SystemInfo['network'] {
  return Object.entries(os.networkInterfaces()).flatMap(([name, addresses]) =>
    (addresses ?? []).map((a) => ({ interface: name, address: a.address, family: a.family, cidr: a.cidr ?? null, internal: a.internal })),
  );
}
