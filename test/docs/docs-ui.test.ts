import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/** GET /api/docs: Swagger UI served by the service itself (no CDN), with a CSP of its own. */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

describe('the docs page', () => {
  it('is an HTML page whose scripts, styles and icons all come from this server', async () => {
    const page = await t.api('GET', '/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const urls = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(urls.length).toBe(5);
    for (const url of urls) {
      expect(url.startsWith('/api/docs/'), url).toBe(true);
      const asset = await fetch(t.url + url);
      expect(asset.status, url).toBe(200);
      expect((await asset.arrayBuffer()).byteLength, url).toBeGreaterThan(100);
    }
    expect(page.text).not.toMatch(/<script>|<style>|on\w+=/); // nothing inline: the CSP allows none
  });

  it('starts Swagger UI on this server\'s document', async () => {
    const script = await t.api('GET', '/api/docs/dyn-docs.js');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.text).toContain("url: '/api/openapi.json'");
    expect(() => new Function('SwaggerUIBundle', 'document', script.text)).not.toThrow(); // it parses
    const bundle = await fetch(`${t.url}/api/docs/swagger-ui-bundle.js`);
    expect(bundle.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await bundle.text()).toContain('SwaggerUIBundle');
    const css = await fetch(`${t.url}/api/docs/swagger-ui.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('has its own CSP (same-origin scripts and requests only) while the API keeps default-src none', async () => {
    const page = await t.api('GET', '/api/docs');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/https?:/);
    const api = await t.api('GET', '/api/openapi.json');
    expect(api.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it.each(['index.js', 'package.json', '..%2Fpackage.json', 'swagger-ui-bundle.js.map', 'absolute-path.js'])('serves no other file: %s is a 404', async (name) => {
    const res = await t.api('GET', `/api/docs/${name}`);
    expect(res.status).toBe(404);
    expect(res.body.success).toBe(false);
  });

  it('refuses query parameters', async () => {
    expect((await t.api('GET', '/api/docs?x=1')).status).toBe(400);
  });
});
