import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { badRequest, notFound } from '../../lib/errors.ts';
import { DOCS_CSP, docsAsset } from '../../docs/docs-ui.ts';
import { OPENAPI_VERSIONS, type OpenApiDocs, type OpenApiVersion } from '../../docs/openapi-docs.ts';
import { requirePrincipal } from '../middleware/require-permission.ts';
import { readQuery } from '../query.ts';
import type { DynContext } from '../state.ts';
import type { ApiRouter } from './router.ts';

// GET /api/openapi.json: the generated document (built once per definition change, see
// OpenApiDocs). With the openApiPublic setting on (the default) anyone gets every enabled
// endpoint; with it off, only signed-in callers, and each sees the endpoints it may call.
// GET /api/docs: the interactive docs page and its files, with their own CSP.
export function docsRoutes(router: ApiRouter, services: { openApi: OpenApiDocs }): void {
  router.get('/openapi.json', async (ctx) => {
    const { version = '3.0' } = readQuery(ctx, ['version']);
    const wanted = version.split('.').slice(0, 2).join('.') as OpenApiVersion;
    if (!/^3\.[01](\.\d+)?$/.test(version) || !OPENAPI_VERSIONS.includes(wanted)) {
      throw badRequest('Query parameter "version" must be 3.0 or 3.1', [{ field: 'version', message: 'must be 3.0 or 3.1' }]);
    }
    const audience = ctx.state.settings.openApiPublic ? { everyone: true as const } : { principal: requirePrincipal(ctx) };
    const gzipped = await services.openApi.gzipped(audience, wanted);
    ctx.type = 'application/json; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.vary('Accept-Encoding');
    // Kept gzipped (see OpenApiDocs): sent as it is, or unzipped on the way to a client that does not take gzip.
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = gzipped;
    } else {
      ctx.body = Readable.from([gzipped]).pipe(createGunzip());
    }
  });

  const serve = async (ctx: DynContext, name: string) => {
    readQuery(ctx, []);
    const asset = docsAsset(name);
    if (!asset) throw notFound(`No route for ${ctx.method} ${ctx.path}`);
    const { body, type } = await asset;
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.set('X-Frame-Options', 'SAMEORIGIN');
    ctx.set('Cache-Control', name === '' ? 'no-cache' : 'public, max-age=3600');
    ctx.type = type;
    ctx.body = body;
  };
  router.get('/docs', (ctx) => serve(ctx, ''));
  router.get('/docs/:file', (ctx) => serve(ctx, ctx.params.file as string));
}
