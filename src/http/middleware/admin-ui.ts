// The web admin (issue 12): the single-page app built from admin/ into dist/admin by
// `npm run build:admin` (run by `npm install`/`npm ci` through `prepare`). GET /admin and every
// /admin/... path answer the app's index.html (the app routes in the browser, so deep links
// work); /admin/assets/<file> are the hashed build outputs, cached for a year. A missing build is
// a page saying how to make it, never a blank page. The app talks to the public management API
// only, with the same session cookie and CSRF token any browser client would use.
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Next } from 'koa';
import type { DynContext } from '../state.ts';

export const ADMIN_ROOT = '/admin';
const ASSETS = `${ADMIN_ROOT}/assets/`;
const DEFAULT_DIST = fileURLToPath(new URL('../../../dist/admin/', import.meta.url));

/**
 * The admin's CSP: same-origin everything, no inline script, no eval, frames of its own origin
 * only (the docs page). CodeMirror adds its styles as a <style> element: it carries the page's
 * per-response nonce (handed to the app in a meta tag), so no 'unsafe-inline' is needed.
 */
export const adminCsp = (nonce?: string): string => [
  "default-src 'none'",
  "script-src 'self'",
  nonce ? `style-src 'self' 'nonce-${nonce}'` : "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The placeholder admin/build.ts writes into index.html's `dyn-csp-nonce` meta tag. */
export const NONCE_PLACEHOLDER = '__DYN_CSP_NONCE__';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

const MISSING_BUILD = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dyn admin: not built</title></head>
<body><h1>The admin is not built</h1>
<p>The web admin is compiled from <code>admin/</code> into <code>dist/admin/</code>. Run
<code>npm run build:admin</code> (or <code>npm install</code>, which runs it) and reload this page.</p>
<p>The API itself works without it: see <a href="/api/docs">/api/docs</a>.</p></body></html>
`;

const isAdminPath = (path: string): boolean => path === ADMIN_ROOT || path.startsWith(`${ADMIN_ROOT}/`);

/** Serves the admin app from `dist` (default: the repository's dist/admin). Other paths pass through. */
export function adminUi(dist: string = DEFAULT_DIST) {
  // Read on every request (a few kB): a build made while the server runs is picked up at once.
  const readIndex = (): Promise<string | null> => readFile(join(dist, 'index.html'), 'utf8').catch(() => null);

  return async (ctx: DynContext, next: Next): Promise<void> => {
    if (!isAdminPath(ctx.path)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      ctx.body = { success: false, error: `Method ${ctx.method} not allowed on ${ctx.path}` };
      return;
    }
    if (ctx.path.startsWith(ASSETS)) {
      ctx.set('Content-Security-Policy', adminCsp());
      const name = ctx.path.slice(ASSETS.length);
      const type = TYPES[extname(name)];
      // Flat names only: the build writes no sub-directories, so no path ever leaves assets/.
      const file = type && /^[\w.-]+$/.test(name) ? join(dist, 'assets', name) : null;
      const found = file ? await stat(file).then((s) => s.isFile(), () => false) : false;
      if (!type || !file || !found) {
        ctx.status = 404;
        ctx.body = { success: false, error: `No admin asset ${name}` };
        return;
      }
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('Vary', 'Accept-Encoding');
      ctx.type = type;
      // The build writes a gzip copy of each script and style sheet.
      const gzip = /\bgzip\b/.test(ctx.get('Accept-Encoding')) ? await readFile(`${file}.gz`).catch(() => null) : null;
      if (gzip) ctx.set('Content-Encoding', 'gzip');
      ctx.body = gzip ?? (await readFile(file));
      return;
    }
    const html = await readIndex();
    const nonce = randomBytes(16).toString('base64');
    ctx.set('Content-Security-Policy', adminCsp(nonce));
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    if (html === null) {
      ctx.status = 503;
      ctx.body = MISSING_BUILD;
      return;
    }
    ctx.body = html.replaceAll(NONCE_PLACEHOLDER, nonce);
  };
}
