// MCP: the tools the signed-in user would see (tools/list through POST /api/mcp, as this user),
// each with its input schema and a ready `tools/call` request; how to connect a client.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Json, Link, Loading, Page, copy, useLoad } from '../ui.tsx';

interface Tool {
  name: string;
  description?: string;
  inputSchema: Record<string, any>;
}

/** A plausible `arguments` object from a tool's input schema. */
function sampleArguments(schema: Record<string, any>): Record<string, unknown> {
  const props = schema.properties ?? {};
  const out: Record<string, unknown> = {};
  if (props.params) out.params = Object.fromEntries(Object.keys(props.params.properties ?? {}).map((k) => [k, 'value']));
  if (props.body) {
    const body = props.body.properties ?? {};
    out.body = Object.fromEntries(Object.entries(body).map(([k, v]: [string, any]) => [k, v.example ?? v.default ?? (v.type === 'number' || v.type === 'integer' ? 0 : v.type === 'boolean' ? false : v.type === 'array' ? [] : v.type === 'object' ? {} : 'text')]));
  }
  if (props.id && (schema.required ?? []).includes('id')) out.id = props.id.example ?? '6650f0c2a1b2c3d4e5f60718';
  if (props.query && !props.id?.required) out.query = { limit: 10 };
  return out;
}

function ToolCard(props: { tool: Tool }) {
  const [open, setOpen] = useState(false);
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: props.tool.name, arguments: sampleArguments(props.tool.inputSchema) } };
  const curl = `curl -s ${location.origin}/api/mcp -H 'X-API-Key: dyn_…' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '${JSON.stringify(call)}'`;
  return (
    <div class="panel">
      <div class="spread" style={{ marginBottom: 0 }}>
        <code>{props.tool.name}</code>
        <button class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide' : 'Show'} schema and example
        </button>
      </div>
      <p class="small muted" style={{ whiteSpace: 'pre-line' }}>
        {props.tool.description}
      </p>
      {open && (
        <div>
          <h3>Input schema</h3>
          <Json value={props.tool.inputSchema} />
          <h3>tools/call</h3>
          <Json value={call} />
          <div class="row">
            <button onClick={() => copy(curl)}>Copy as curl</button>
          </div>
        </div>
      )}
    </div>
  );
}

export default function Mcp() {
  const tools = useLoad(async () => {
    // JSON-RPC, not the API envelope: read the text and take result.tools.
    const res = await api<string>('POST', '/api/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, raw: true });
    const answer = JSON.parse(res.data);
    if (answer.error) throw new Error(answer.error.message);
    return answer.result.tools as Tool[];
  }, []);
  const url = `${location.origin}/api/mcp`;
  const desktop = { mcpServers: { dyn: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'X-API-Key:${DYN_API_KEY}'], env: { DYN_API_KEY: 'dyn_…' } } } };
  const http = { servers: { dyn: { type: 'http', url, headers: { 'X-API-Key': 'dyn_…' } } } };
  return (
    <Page title="MCP">
      <div class="panel">
        <h3 style={{ marginTop: 0 }}>Connect a client</h3>
        <p>
          The MCP server is at <code>{url}</code> (Streamable HTTP, stateless, JSON answers). Create an <Link to="/api-keys">API key</Link>, then add it to
          the client's configuration. Clients that speak HTTP themselves:
        </p>
        <Json value={http} />
        <p>Claude Desktop (through the mcp-remote bridge):</p>
        <Json value={desktop} />
        <p class="small muted">An API key sees public and authenticated endpoints; group endpoints need a user's access token.</p>
      </div>
      <h2>Tools you would see ({tools.data?.length ?? '…'})</h2>
      <ErrorBox error={tools.error} />
      {!tools.data && !tools.error && <Loading />}
      {tools.data?.map((tool) => (
        <ToolCard tool={tool} />
      ))}
    </Page>
  );
}
