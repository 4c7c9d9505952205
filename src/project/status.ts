import type { Problem } from './problem.ts';

/**
 * What GET /api/project/status reports about the project directory. One object per server,
 * owned by the composition root; the watcher and reconciler (when they run) update it, the
 * route reads it.
 */
export interface LastReconcile {
  at: string;
  ok: boolean;
  summary: { create: number; update: number; delete: number };
  error?: string;
}

export interface ProjectStatusView {
  dir: string;
  watching: boolean;
  lastReconcile: LastReconcile | null;
  /** Problems of the last load or apply, with file and line where known. */
  problems: Problem[];
}

export class ProjectStatus {
  private state: ProjectStatusView;

  constructor(dir: string) {
    this.state = { dir, watching: false, lastReconcile: null, problems: [] };
  }

  /** A copy: callers cannot change the status by editing what they read. */
  view(): ProjectStatusView {
    return structuredClone(this.state);
  }

  update(patch: Partial<Omit<ProjectStatusView, 'dir'>>): void {
    this.state = { ...this.state, ...structuredClone(patch) };
  }
}
