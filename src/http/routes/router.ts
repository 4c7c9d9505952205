import { Router } from '@koa/router';
import type { DynState } from '../state.ts';

export type ApiRouter = Router<DynState>;

export function createRouter(prefix?: string): ApiRouter {
  return new Router<DynState>(prefix ? { prefix } : {});
}
