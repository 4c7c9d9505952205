// Who makes a change, as the services that write it audit it: a caller of the API (its principal
// and request), or the platform itself acting for someone who is not on the line (the project
// directory's file sync). Every write method of a service takes one, so that every path to a
// change — the API, `POST /api/project/apply`, `dynctl apply`, an edited project file — leaves the
// same audit entry, naming who did it.
import type { Principal } from './principal.ts';

/** The request a change came in with (audit columns ip, method, path). */
export interface ActorRequest {
  ip: string;
  method: string;
  path: string;
}

export interface Actor {
  /** The caller, for permission checks and the entry's userId; null when the platform acts itself. */
  principal: Principal | null;
  request: ActorRequest | null;
  /** The entry's `source` when the change does not come from an API call (`project-sync`); API changes name their area. */
  source?: string;
}

/** An API caller: changes to users, groups and keys are checked against what it may grant. */
export type CallerActor = Actor & { principal: Principal };

/** The project directory's watcher, applying edited files. */
export const PROJECT_SYNC_ACTOR: Actor = { principal: null, request: null, source: 'project-sync' };
