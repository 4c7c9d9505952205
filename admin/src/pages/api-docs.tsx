// The OpenAPI docs (Swagger UI, served by the server at /api/docs) embedded same-origin.
import { Page } from '../ui.tsx';

export default function ApiDocs() {
  return (
    <Page
      title="API docs"
      actions={
        <>
          <a class="button" href="/api/openapi.json" target="_blank" rel="noopener">
            openapi.json
          </a>
          <a class="button" href="/api/docs" target="_blank" rel="noopener">
            Open in a new tab
          </a>
        </>
      }
    >
      <iframe class="docs-frame" src="/api/docs" title="OpenAPI documentation (Swagger UI)" />
    </Page>
  );
}
