// The endpoint editor's "Allowed user groups": a tick per user group (GET /api/groups, which
// view, manage_users or manage_api may read). When the list cannot be read (a 403 from a server
// that asks more, a failure), the form says so, and the groups the endpoint already allows stay
// ticked, shown by id, so a save sends them back unchanged instead of dropping them.
// An allowed id missing from the list (past the first 100 groups) is shown by id too.
import type { ComponentChildren } from 'preact';
import { ApiError, get, type Detail } from '../api.ts';
import { Field, errorText, useLoad } from '../ui.tsx';

interface UserGroup {
  _id: string;
  name: string;
}

/** Why the groups are not listed: a permission notice for 403, an error otherwise. */
function ListProblem(props: { error: unknown; byId: boolean }) {
  if (!props.error) return null;
  const kept = `Allowed groups already set stay as they are${props.byId ? ' (shown by id)' : ''}.`;
  if (props.error instanceof ApiError && props.error.status === 403) {
    return (
      <div class="notice small" role="alert">
        You may not list user groups: that needs <strong>view, manage_users or manage_api</strong>. {kept}
      </div>
    );
  }
  return (
    <div class="error-box small" role="alert">
      <strong>Could not list user groups: {errorText(props.error).replace(/\.$/, '')}</strong>. {kept}
    </div>
  );
}

/**
 * @param value   the ids ticked in the draft
 * @param saved   the ids the stored endpoint allows: kept on show even when unticked, to tick again
 */
export function AllowedGroups(props: { value: string[]; saved: string[]; onChange: (value: string[]) => void; readOnly: boolean; details: Detail[] }) {
  const groups = useLoad(() => get<UserGroup[]>('/api/groups?limit=100').then((r) => r.data), []);
  const listed = groups.data ?? [];
  const known = new Set(listed.map((g) => g._id));
  // Until the list answers, an id cannot be told from a name not yet read: nothing shows by id.
  const settled = groups.data !== undefined || !!groups.error;
  const byId = settled ? [...new Set([...props.saved, ...props.value])].filter((id) => !known.has(id)) : [];
  const toggle = (id: string, on: boolean) => props.onChange(on ? [...props.value, id] : props.value.filter((x) => x !== id));
  const box = (id: string, label: ComponentChildren) => (
    <label class="check">
      <input type="checkbox" disabled={props.readOnly} checked={props.value.includes(id)} onChange={(e) => toggle(id, e.currentTarget.checked)} />
      {label}
    </label>
  );
  return (
    <Field group label="Allowed user groups" name="allowedGroupIds" details={props.details}>
      <ListProblem error={groups.error} byId={byId.length > 0} />
      <div>
        {listed.map((g) => box(g._id, g.name))}
        {byId.map((id) =>
          box(
            id,
            <>
              <code>{id}</code>
              {!groups.error && <span class="muted small">not among the listed groups</span>}
            </>,
          ),
        )}
        {settled && !groups.error && listed.length + byId.length === 0 && <span class="muted small">No user groups yet.</span>}
      </div>
    </Field>
  );
}
