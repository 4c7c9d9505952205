// The read-only ER diagram of the API: one table per path (all its methods merged; fields from
// the first of its POST, PUT, PATCH, GET definitions), `_id` as primary key, reference fields as
// foreign keys with arrows to their target table, endpoint groups as frames. Laid out by elkjs
// (in this page's chunk only); pan with the mouse or arrow keys, zoom with the wheel or + / −.
import ELK from 'elkjs/lib/elk.bundled.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../api.ts';
import { ErrorBox, Link, Loading, Method, Page, useLoad } from '../ui.tsx';

interface Field {
  name: string;
  type: string;
  required?: boolean;
  ref?: string;
  items?: { type?: string; ref?: string };
  children?: Field[];
}
interface Endpoint {
  _id: string;
  path: string;
  method: string;
  groupId: string | null;
  schema: Field[];
  isSystem?: boolean;
}
interface Group {
  _id: string;
  name: string;
  color: string;
}

interface Row {
  name: string;
  type: string;
  key?: 'PK' | 'FK';
  ref?: string;
  required?: boolean;
}
interface Table {
  path: string;
  methods: string[];
  groupId: string | null;
  rows: Row[];
  firstId: string;
}

const FIELD_SOURCE = ['POST', 'PUT', 'PATCH', 'GET'];
const ROW_H = 18;
const HEAD_H = 26;
const CHAR_W = 7.2;

async function all<T>(path: string): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const res = await get<T[]>(`${path}${path.includes('?') ? '&' : '?'}page=${page}&limit=100`);
    out.push(...res.data);
    if (!res.meta || page * res.meta.limit >= res.meta.total || res.data.length === 0) return out;
  }
}

/** Tables by path, from the definitions. */
export function tablesOf(endpoints: Endpoint[]): Table[] {
  const byPath = new Map<string, Endpoint[]>();
  for (const e of endpoints.filter((x) => !x.isSystem)) byPath.set(e.path, [...(byPath.get(e.path) ?? []), e]);
  return [...byPath.entries()].map(([path, defs]) => {
    const source = FIELD_SOURCE.map((m) => defs.find((d) => d.method === m)).find(Boolean) ?? defs[0]!;
    const rows: Row[] = [{ name: '_id', type: 'id', key: 'PK', required: true }];
    for (const f of source.schema) {
      const ref = f.type === 'reference' ? f.ref : f.type === 'array' && f.items?.type === 'reference' ? f.items.ref : undefined;
      rows.push({ name: f.name, type: f.type === 'array' && f.items?.type ? `${f.items.type}[]` : f.type, required: f.required, ...(ref ? { key: 'FK' as const, ref } : {}) });
    }
    return { path, methods: defs.map((d) => d.method), groupId: defs.find((d) => d.groupId)?.groupId ?? null, rows, firstId: source._id };
  });
}

interface Laid {
  width: number;
  height: number;
  frames: Array<{ id: string; x: number; y: number; width: number; height: number; label: string; color: string }>;
  nodes: Array<{ table: Table; x: number; y: number; width: number; height: number }>;
  edges: Array<{ points: Array<{ x: number; y: number }>; label: string }>;
}

async function layout(tables: Table[], groups: Group[]): Promise<Laid> {
  const elk = new ELK();
  const widthOf = (t: Table) => Math.max(t.path.length * CHAR_W + 20, ...t.rows.map((r) => (r.name.length + r.type.length + 6) * CHAR_W + 20));
  const node = (t: Table, i: number) => ({ id: `t${i}`, width: widthOf(t), height: HEAD_H + t.rows.length * ROW_H + 6 });
  const index = new Map(tables.map((t, i) => [t.path, i]));
  const grouped = new Map<string | null, number[]>();
  tables.forEach((t, i) => grouped.set(t.groupId, [...(grouped.get(t.groupId) ?? []), i]));
  const children: any[] = [];
  for (const [groupId, members] of grouped) {
    const nodes = members.map((i) => node(tables[i]!, i));
    if (groupId) children.push({ id: `g${groupId}`, layoutOptions: { 'elk.padding': '[top=30,left=14,bottom=14,right=14]' }, children: nodes });
    else children.push(...nodes);
  }
  const edges: any[] = [];
  tables.forEach((t, i) =>
    t.rows.forEach((r, k) => {
      const target = r.ref ? index.get(r.ref) : undefined;
      if (target !== undefined) edges.push({ id: `e${i}_${k}`, sources: [`t${i}`], targets: [`t${target}`], label: r.name });
    }),
  );
  const graph: any = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.spacing.nodeNode': '30',
      'elk.layered.spacing.nodeNodeBetweenLayers': '60',
      'elk.json.shapeCoords': 'ROOT',
      'elk.json.edgeCoords': 'ROOT',
    },
    children,
    edges,
  });
  const laid: Laid = { width: graph.width ?? 0, height: graph.height ?? 0, frames: [], nodes: [], edges: [] };
  const visit = (n: any) => {
    if (n.id.startsWith('g')) {
      const g = groups.find((x) => `g${x._id}` === n.id);
      laid.frames.push({ id: n.id, x: n.x, y: n.y, width: n.width, height: n.height, label: g?.name ?? 'group', color: g?.color ?? '#888' });
      (n.children ?? []).forEach(visit);
    } else laid.nodes.push({ table: tables[Number(n.id.slice(1))]!, x: n.x, y: n.y, width: n.width, height: n.height });
  };
  (graph.children ?? []).forEach(visit);
  const collect = (container: any) => {
    for (const e of container.edges ?? []) {
      for (const s of e.sections ?? []) laid.edges.push({ points: [s.startPoint, ...(s.bendPoints ?? []), s.endPoint], label: e.id });
    }
    (container.children ?? []).forEach(collect);
  };
  collect(graph);
  return laid;
}

function Diagram(props: { laid: Laid }) {
  const { laid } = props;
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ x: 20, y: 20, k: 1 });
  const drag = useRef<{ x: number; y: number } | null>(null);
  const fit = () => {
    const el = box.current;
    if (!el || !laid.width) return;
    const k = Math.min(1.5, (el.clientWidth - 40) / laid.width, (el.clientHeight - 40) / laid.height);
    setView({ x: 20, y: 20, k: Math.max(0.2, k) });
  };
  useEffect(fit, [laid]);
  useEffect(() => {
    const el = box.current!;
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      const rect = el.getBoundingClientRect();
      const px = event.clientX - rect.left;
      const py = event.clientY - rect.top;
      setView((v) => {
        const k = Math.min(4, Math.max(0.2, v.k * (event.deltaY < 0 ? 1.1 : 1 / 1.1)));
        return { k, x: px - ((px - v.x) * k) / v.k, y: py - ((py - v.y) * k) / v.k };
      });
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, []);
  const zoom = (factor: number) => setView((v) => ({ ...v, k: Math.min(4, Math.max(0.2, v.k * factor)) }));
  const onKey = (event: KeyboardEvent) => {
    const step = 40;
    const moves: Record<string, [number, number]> = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    const move = moves[event.key];
    if (move) {
      event.preventDefault();
      setView((v) => ({ ...v, x: v.x + move[0], y: v.y + move[1] }));
    } else if (event.key === '+' || event.key === '=') zoom(1.2);
    else if (event.key === '-') zoom(1 / 1.2);
  };
  return (
    <div>
      <div class="row" style={{ marginBottom: '8px' }}>
        <button onClick={() => zoom(1.2)} aria-label="Zoom in">
          +
        </button>
        <button onClick={() => zoom(1 / 1.2)} aria-label="Zoom out">
          −
        </button>
        <button onClick={fit}>Fit</button>
        <span class="small muted">Drag or use the arrow keys to pan; wheel or + / − to zoom.</span>
      </div>
      <div
        class="er-canvas"
        ref={box}
        tabIndex={0}
        role="img"
        aria-label={`Entity diagram: ${laid.nodes.length} tables`}
        onKeyDown={onKey}
        onPointerDown={(e) => {
          drag.current = { x: e.clientX - view.x, y: e.clientY - view.y };
          (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
        }}
        onPointerMove={(e) => drag.current && setView((v) => ({ ...v, x: e.clientX - drag.current!.x, y: e.clientY - drag.current!.y }))}
        onPointerUp={() => (drag.current = null)}
      >
        <svg width="100%" height="100%">
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
              <path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor" />
            </marker>
          </defs>
          <g transform={`translate(${view.x} ${view.y}) scale(${view.k})`} fill="currentColor" font-size="12">
            {laid.frames.map((f) => (
              <g>
                <rect x={f.x} y={f.y} width={f.width} height={f.height} rx="8" fill={f.color} fill-opacity="0.08" stroke={f.color} stroke-dasharray="5 3" />
                <text x={f.x + 10} y={f.y + 18} font-weight="600" fill={f.color}>
                  {f.label}
                </text>
              </g>
            ))}
            {laid.edges.map((e) => (
              <polyline points={e.points.map((p) => `${p.x},${p.y}`).join(' ')} fill="none" stroke="var(--accent)" stroke-width="1.5" marker-end="url(#arrow)" style={{ color: 'var(--accent)' }} />
            ))}
            {laid.nodes.map((n) => (
              <g data-table={n.table.path}>
                <rect x={n.x} y={n.y} width={n.width} height={n.height} rx="5" fill="var(--panel)" stroke="var(--border)" />
                <rect x={n.x} y={n.y} width={n.width} height={HEAD_H - 4} rx="5" fill="var(--code)" />
                <text x={n.x + 8} y={n.y + 16} font-weight="600" font-family="ui-monospace, monospace">
                  {n.table.path}
                </text>
                {n.table.rows.map((r, i) => (
                  <text x={n.x + 8} y={n.y + HEAD_H + 10 + i * ROW_H} font-family="ui-monospace, monospace" fill={r.key ? 'var(--accent)' : 'currentColor'}>
                    {r.key ? `${r.key} ` : '   '}
                    {r.name}
                    {r.required ? '*' : ''}: {r.type}
                  </text>
                ))}
              </g>
            ))}
          </g>
        </svg>
      </div>
    </div>
  );
}

export default function ApiSchema() {
  const data = useLoad(async () => {
    const [endpoints, groups] = await Promise.all([all<Endpoint>('/api/endpoints'), all<Group>('/api/endpoints/groups')]);
    const tables = tablesOf(endpoints);
    return { tables, laid: await layout(tables, groups) };
  }, []);
  if (data.error) return <ErrorBox error={data.error} />;
  if (!data.data) return <Loading />;
  const { tables, laid } = data.data;
  return (
    <Page title="API schema">
      {tables.length === 0 ? <p class="muted">No endpoints yet.</p> : <Diagram laid={laid} />}
      <h2>Tables</h2>
      <ul class="small">
        {tables.map((t) => (
          <li>
            <Link to={`/endpoints/${t.firstId}`}>
              <code>{t.path}</code>
            </Link>{' '}
            {t.methods.map((m) => (
              <Method method={m} />
            ))}{' '}
            {t.rows
              .filter((r) => r.key === 'FK')
              .map((r) => `${r.name} → ${r.ref}`)
              .join(', ')}
          </li>
        ))}
      </ul>
    </Page>
  );
}
