// Network rules editor (endpoints and endpoint groups): on/off, allowed domains, allowed IP ranges.
import type { Detail } from '../api.ts';
import { Field } from '../ui.tsx';

export interface NetworkAccess {
  enabled: boolean;
  allowedDomains: string[];
  allowedIpRanges: string[];
}

export const NO_RULES: NetworkAccess = { enabled: false, allowedDomains: [], allowedIpRanges: [] };

const toList = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

export function NetworkRules(props: { value: NetworkAccess; onChange: (value: NetworkAccess) => void; details: Detail[]; readOnly?: boolean }) {
  const v = props.value ?? NO_RULES;
  return (
    <fieldset class="panel" style={{ margin: '8px 0' }}>
      <legend>Network rules</legend>
      <label class="check">
        <input type="checkbox" checked={v.enabled} disabled={props.readOnly} onChange={(e) => props.onChange({ ...v, enabled: e.currentTarget.checked })} /> Enabled
      </label>
      <div class="form-grid" style={{ marginTop: '8px' }}>
        <Field label="Allowed domains (one a line; *.example.com)" name="networkAccess.allowedDomains" details={props.details}>
          <textarea class="mono" rows={3} disabled={props.readOnly} value={v.allowedDomains.join('\n')} onChange={(e) => props.onChange({ ...v, allowedDomains: toList(e.currentTarget.value) })} />
        </Field>
        <Field label="Allowed IPs and CIDR ranges (one a line)" name="networkAccess.allowedIpRanges" details={props.details}>
          <textarea class="mono" rows={3} disabled={props.readOnly} value={v.allowedIpRanges.join('\n')} onChange={(e) => props.onChange({ ...v, allowedIpRanges: toList(e.currentTarget.value) })} />
        </Field>
      </div>
      <div class="hint">Domains only: the domain must match; IPs only: the IP must match; both: either. Enabled with both empty: no filter.</div>
    </fieldset>
  );
}
