// The interactive docs page (Swagger UI from the swagger-ui-dist package), served by the service
// itself: the page, a small start script and the package's own files, no CDN. The page loads the
// document from /api/openapi.json on the same origin, so "Try it out" calls this server with the
// token or API key entered under "Authorize". Scripts are files (no inline script), which lets the
// route's CSP stay strict.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** Where the docs live; assets are under it. */
export const DOCS_ROOT = '/api/docs';

const require = createRequire(import.meta.url);
// absolute-path.js resolves the package directory without loading the 1.7 MB bundle into the server.
const distDir = (require('swagger-ui-dist/absolute-path.js') as () => string)();

/** The package files the page uses, by the name they are served under. */
const PACKAGE_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** The CSP of the docs routes only (the API keeps `default-src 'none'`). Swagger UI sets inline styles. */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  // The web admin embeds the page (same origin only).
  "frame-ancestors 'self'",
].join('; ');

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>dyn API docs</title>
    <link rel="stylesheet" href="${DOCS_ROOT}/swagger-ui.css">
    <link rel="icon" type="image/png" href="${DOCS_ROOT}/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${DOCS_ROOT}/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_ROOT}/swagger-ui-bundle.js"></script>
    <script src="${DOCS_ROOT}/dyn-docs.js"></script>
  </body>
</html>
`;

// Same-origin requests carry the admin UI's session cookie, so a signed-in user sees their own
// document when it is not public; "Authorize" adds a Bearer token or API key to "Try it out".
const START_SCRIPT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  tryItOutEnabled: true,
  // The default validator badge is an image from validator.swagger.io: off (offline, and the CSP).
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  // A request authenticated by the session cookie (no Authorize) needs the CSRF token to write.
  requestInterceptor: (request) => {
    const csrf = document.cookie.match(/(?:^|; )dyn_csrf=([^;]+)/);
    if (csrf) request.headers['X-CSRF-Token'] = decodeURIComponent(csrf[1]);
    return request;
  },
});
`;

export interface DocsAsset {
  body: string | Buffer;
  type: string;
}

const cache = new Map<string, Promise<DocsAsset>>();

/** A file of the docs page by name, or undefined for any other name (never a path on disk). */
export function docsAsset(name: string): Promise<DocsAsset> | undefined {
  if (name === '' || name === 'index.html') return Promise.resolve({ body: PAGE, type: 'text/html; charset=utf-8' });
  if (name === 'dyn-docs.js') return Promise.resolve({ body: START_SCRIPT, type: 'text/javascript; charset=utf-8' });
  const type = Object.hasOwn(PACKAGE_FILES, name) ? PACKAGE_FILES[name] : undefined;
  if (!type) return undefined;
  let asset = cache.get(name);
  if (!asset) {
    asset = readFile(join(distDir, name)).then((body) => ({ body, type }));
    asset.catch(() => cache.delete(name));
    cache.set(name, asset);
  }
  return asset;
}
