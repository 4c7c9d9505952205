// The engine call the endpoint action makes: the engine's one invoke path (HTTP, /test, MCP and
// cron all run calls through it), narrowed to what an action needs so actions stay testable.
import type { Principal } from '../../model/principal.ts';
import type { EngineResponse, InvokeRequest, InvokeTarget } from '../../runtime/engine.ts';

export type { InvokeRequest, InvokeTarget } from '../../runtime/engine.ts';
export type InvokeResponse = Pick<EngineResponse, 'status' | 'body' | 'headers'>;

export type Invoke = (target: InvokeTarget, request: InvokeRequest, principal: Principal | undefined) => Promise<InvokeResponse>;
