// Raw `systemsettings`: the one settings document (`key: "global"`). Writes go through
// SettingsService, so every value is validated and every instance reloads on its next request.
// A replace sets `values` whole (settings it leaves out return to their defaults); the document
// cannot be deleted (405) — replace it with `{"values": {}}` to reset every setting.
import { badRequest, conflict } from '../../../lib/errors.ts';
import type { Store } from '../../../store/types.ts';
import { DEFAULT_SETTINGS, type SettingsService } from '../../settings.ts';
import { asActor, CREATE_ONLY, editable, MANAGED, type RawActor, type RawAdapter } from '../adapter.ts';

const KEY = 'global';

export function settingsAdapter(settings: SettingsService, store: Store): RawAdapter {
  const stored = async () => {
    const doc = await store.collection('systemsettings').findOne({ key: KEY });
    if (!doc) throw new Error('the settings document was not written');
    return doc;
  };
  const write = async (values: unknown, actor: RawActor) => {
    if (typeof values !== 'object' || values === null || Array.isArray(values)) throw badRequest('Invalid document: values must be an object of settings', [{ field: 'values', message: 'must be an object' }]);
    await settings.update({ ...structuredClone(DEFAULT_SETTINGS), ...values }, asActor(actor));
    return stored();
  };
  return {
    name: 'systemsettings',
    searchFields: ['key'],
    sort: { key: 1 },
    fields: { key: CREATE_ONLY, values: editable({}), updatedAt: MANAGED },
    label: (doc) => String(doc.key),
    async create(input, actor) {
      if (input.key !== KEY) throw badRequest(`Invalid document: the only settings document has key "${KEY}"`, [{ field: 'key', message: `must be "${KEY}"` }]);
      if (await store.collection('systemsettings').findOne({ key: KEY })) throw conflict('The settings document exists; replace it with PUT');
      return write(input.values ?? {}, actor);
    },
    async replace(current, changes, actor) {
      return changes.values === undefined ? current : write(changes.values, actor);
    },
  };
}
