import type { CollectionSpec } from './types.ts';

/**
 * Every collection the service uses, with the indexes its queries need. Both adapters create
 * these at open time; a collection not listed here cannot be opened (a typo fails loudly).
 */
export const COLLECTIONS: readonly CollectionSpec[] = [
  {
    name: 'users',
    indexes: [{ fields: ['loginKey'], unique: true }, { fields: ['emailKey'], unique: true }, { fields: ['createdAt'] }],
  },
  { name: 'groups', indexes: [{ fields: ['nameKey'], unique: true }] },
  { name: 'endpoints', indexes: [{ fields: ['path', 'method'], unique: true }, { fields: ['groupId'] }] },
  { name: 'endpointgroups', indexes: [{ fields: ['nameKey'], unique: true }] },
  // (resourcePath, createdAt, _id) serves a page in list order without sorting ties. Records
  // keep their fields in columns (embedded store), so pages are read and sent without parsing.
  {
    name: 'endpointdatas',
    indexes: [{ fields: ['resourcePath', 'createdAt', '_id'] }, { fields: ['endpointId'] }],
    ttl: true,
    columns: { text: ['resourcePath', 'endpointId', 'createdAt', 'updatedAt', 'expiresAt'], json: ['data'] },
    // Schema fields marked `indexed` get an index over the records of their path (see README).
    fieldIndexes: { scope: 'resourcePath', order: ['createdAt', '_id'] },
  },
  // Records of a project import being streamed in, moved into endpointdatas in one step when the
  // import commits (Store.moveStaged); no read of records ever looks here. Same columns as
  // endpointdatas plus the stage's; (stageId, targetId) unique finds an id repeated in one import.
  {
    name: 'importrecords',
    indexes: [{ fields: ['stageId', 'targetId'], unique: true }, { fields: ['stagedAt'] }],
    columns: { text: ['stageId', 'targetId', 'stagedAt', 'resourcePath', 'endpointId', 'createdAt', 'updatedAt', 'expiresAt'], json: ['data'] },
    bulk: true,
  },
  // Record totals per resourcePath, so list totals need no COUNT over the records.
  { name: 'recordcounts', indexes: [{ fields: ['resourcePath'], unique: true }] },
  { name: 'logs', indexes: [{ fields: ['createdAt'] }, { fields: ['action', 'createdAt'] }], columns: { text: ['action', 'createdAt'] } },
  // Per-day counters behind the dashboard (see src/services/daily-stats.ts).
  { name: 'dailystats', indexes: [{ fields: ['day', 'metric'], unique: true }] },
  { name: 'systemsettings', indexes: [{ fields: ['key'], unique: true }] },
  { name: 'apikeys', indexes: [{ fields: ['keyId'], unique: true }] },
  // Internal: refresh-token sessions, login lockout counters, cache revisions.
  { name: 'sessions', indexes: [{ fields: ['tokenHash'], unique: true }, { fields: ['userId'] }], ttl: true },
  { name: 'loginattempts', indexes: [{ fields: ['loginKey'], unique: true }, { fields: ['expiresAt'] }] },
  { name: 'revisions', indexes: [{ fields: ['key'], unique: true }] },
  // Cron jobs, their runs (kept like the audit log), and one claim per job and fire time, so that
  // of several instances sharing the store exactly one runs each scheduled fire (see src/automation/cron).
  { name: 'cronjobs', indexes: [{ fields: ['nameKey'], unique: true }] },
  { name: 'cronruns', indexes: [{ fields: ['jobId', 'startedAt'] }, { fields: ['startedAt'] }] },
  { name: 'cronclaims', indexes: [{ fields: ['jobId', 'scheduledAt'], unique: true }], ttl: true },
  // Webhooks and their deliveries; a pending delivery is the outbox row the dispatcher claims
  // (src/automation/webhooks), so (status, nextAttemptAt) finds what is due.
  { name: 'webhooks', indexes: [{ fields: ['nameKey'], unique: true }] },
  { name: 'webhookdeliveries', indexes: [{ fields: ['status', 'nextAttemptAt'] }, { fields: ['webhookId', 'createdAt'] }, { fields: ['createdAt'] }] },
  // Which project strings were placeholders (see src/project/placeholder-memory.ts).
  { name: 'projectplaceholders', indexes: [{ fields: ['kind', 'key'], unique: true }] },
];

export function collectionSpec(name: string): CollectionSpec {
  const spec = COLLECTIONS.find((c) => c.name === name);
  if (!spec) throw new Error(`unknown collection "${name}"`);
  return spec;
}
