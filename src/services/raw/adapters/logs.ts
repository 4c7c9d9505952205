// Raw `logs`: the audit log is written by the service itself, so the browser reads it and may
// delete entries or clear it (each of which is audited in turn), but never creates or edits one.
import type { AuditLog } from '../../audit-log.ts';
import { asActor, MANAGED, type RawAdapter } from '../adapter.ts';

export function logsAdapter(audit: AuditLog): RawAdapter {
  return {
    name: 'logs',
    alsoNeeds: { read: ['view_logs'] },
    searchFields: ['message', 'path'],
    sort: { createdAt: -1, _id: -1 },
    fields: Object.fromEntries(['action', 'message', 'source', 'ip', 'userId', 'method', 'path', 'statusCode', 'createdAt'].map((f) => [f, MANAGED])),
    label: (doc) => String(doc.action),
    async delete(current) {
      await audit.deleteOne(current._id);
      return current;
    },
    clear: (actor) => audit.clear(asActor(actor)),
  };
}
