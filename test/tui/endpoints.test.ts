import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tryFields } from '../../src/tui/screens/endpoints.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { KEY, renderTui } from '../helpers/tui.ts';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  token = await server.adminToken();
  const create = await server.api('POST', '/api/endpoints', {
    token,
    body: { name: 'Create product', path: '/api/shop/products', method: 'POST', accessType: 'public', schema: { title: { type: 'string', required: true, maxLength: 200 }, price: { type: 'number', minimum: 0 } } },
  });
  expect(create.status).toBe(201);
  await server.api('POST', '/api/endpoints', { token, body: { name: 'List products', path: '/api/shop/products', method: 'GET', accessType: 'public', schema: {} } });
  await server.api('POST', '/api/endpoints', { token, body: { name: 'Orders', path: '/api/shop/orders', method: 'GET', accessType: 'public', schema: {} } });
  for (const title of ['Dune', 'Emma']) expect((await server.api('POST', '/api/shop/products', { body: { title, price: 5 } })).status).toBe(201);
});
afterAll(async () => {
  await server.close();
});

describe('try it: the fields of the form', () => {
  it.each([
    { method: 'POST', path: '/api/shop/products', fields: ['Body'] },
    { method: 'GET', path: '/api/shop/products', fields: ['Record id?'] },
    { method: 'PUT', path: '/api/shop/products', fields: ['Record id', 'Body'] },
    { method: 'PATCH', path: '/api/shop/products', fields: ['Record id', 'Body'] },
    { method: 'DELETE', path: '/api/shop/products', fields: ['Record id'] },
    { method: 'GET', path: '/api/shops/:shopId/items', fields: [':shopId', 'Record id?'] },
    { method: 'POST', path: '/api/shops/:shopId/items/:kind', fields: [':shopId', ':kind', 'Body'] },
    { method: 'PUT', path: '/api/x/:id', fields: [':id', 'Record id', 'Body'] },
  ])('$method $path asks for $fields (? optional)', ({ method, path, fields }) => {
    expect(tryFields({ method, path } as never).map((field) => `${field.label}${field.required || field.kind === 'body' ? '' : '?'}`)).toEqual(fields);
  });

  it('keeps a param called id apart from the record id', () => {
    expect(tryFields({ method: 'PUT', path: '/api/x/:id' } as never).map((field) => field.key)).toEqual([':id', 'id', 'body']);
  });
});

describe('dynctl tui: endpoints', () => {
  it('lists the definitions and narrows them with / search', async () => {
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      const list = await tui.waitFor('/api/shop/orders');
      expect(list).toMatch(/POST +\/api\/shop\/products +Create product +public +\d/);
      await tui.press('/');
      await tui.type('orders');
      await tui.press(KEY.enter);
      const frame = await tui.waitFor('1 of');
      expect(frame).toContain('/api/shop/orders');
      expect(frame).not.toContain('Create product');
    } finally {
      tui.unmount();
    }
  });

  it('opens a definition with its schema, access, network rules and call count, and Esc goes back', async () => {
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      await tui.waitFor('/api/shop/orders');
      await tui.press('/');
      await tui.type('Create');
      await tui.press(KEY.enter, KEY.enter);
      const detail = await tui.waitFor('Schema (2 fields)');
      expect(detail).toContain('POST /api/shop/products');
      expect(detail).toContain('Access   public');
      expect(detail).toContain('Network  open');
      expect(detail).toContain('Calls    2');
      expect(detail).toMatch(/title +string +required maxLength=200/);
      expect(detail).toContain('t try it');
      await tui.press(KEY.escape);
      await tui.waitFor('METHOD PATH');
    } finally {
      tui.unmount();
    }
  });

  it('shows a reference by the path it points into, and Esc comes back to the row the detail was opened from', async () => {
    const reviews = await server.api('POST', '/api/endpoints', {
      token,
      body: { name: 'Reviews', path: '/api/shop/reviews', method: 'GET', accessType: 'public', schema: { product: { type: 'reference', ref: '/api/shop/products' }, related: { type: 'array', items: { type: 'reference', ref: '/api/shop/products' } } } },
    });
    expect(reviews.status, reviews.text).toBe(201);
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      const list = await tui.waitFor('/api/shop/reviews');
      const rowsBefore = list.split('\n').filter((line) => /^[›\s](GET|POST) /.test(line));
      const target = rowsBefore.findIndex((line) => line.includes('/api/shop/reviews'));
      await tui.press('j'.repeat(target));
      await tui.waitFor(/›GET +\/api\/shop\/reviews/);
      await tui.press(KEY.enter);
      const detail = await tui.waitFor('Schema (2 fields)');
      expect(detail).toMatch(/product +reference +→ \/api\/shop\/products/);
      expect(detail).toMatch(/related +array +→ \[\/api\/shop\/products\]/);
      expect(detail).not.toMatch(/[0-9a-f]{24}/);
      await tui.press(KEY.escape);
      expect(await tui.waitFor('METHOD PATH')).toMatch(/›GET +\/api\/shop\/reviews/);
    } finally {
      tui.unmount();
    }
  });

  it('tries an endpoint with an edited body and shows status, body and time', async () => {
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      await tui.waitFor('/api/shop/orders');
      await tui.press('/');
      await tui.type('Create');
      await tui.press(KEY.enter, KEY.enter);
      await tui.waitFor('Schema (2 fields)');
      await tui.press('t');
      await tui.waitFor('"title":"text"');
      // Replace the example body: clear it, then type a body the schema refuses.
      await tui.press(...Array.from({ length: 40 }, () => '\u007F'));
      await tui.type('{"price":-1}');
      await tui.press(KEY.enter);
      const refused = await tui.waitFor('Status 400');
      expect(refused).toMatch(/Time [\d.]+ ms/);
      expect(refused).toContain('"field": "title"');
      await tui.press('e');
      await tui.press(...Array.from({ length: 20 }, () => '\u007F'));
      await tui.type('{"title":"Kafka"}');
      await tui.press(KEY.enter);
      const created = await tui.waitFor('Status 201');
      expect(created).toContain('"title": "Kafka"');
    } finally {
      tui.unmount();
    }
  });

  it('tries a PUT on one record: asks for the record id, then sends it with the body and shows the replaced record', async () => {
    const replace = { name: 'Replace product', path: '/api/shop/products', method: 'PUT', accessType: 'public', schema: { title: { type: 'string', required: true, maxLength: 200 }, price: { type: 'number', minimum: 0 } } };
    expect((await server.api('POST', '/api/endpoints', { token, body: replace })).status).toBe(201);
    const record = await server.api('POST', '/api/shop/products', { body: { title: 'Middlemarch', price: 5 } });
    expect(record.status).toBe(201);
    const id = record.body.data._id as string;
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      await tui.waitFor('/api/shop/orders');
      await tui.press('/');
      await tui.type('Replace');
      await tui.press(KEY.enter, KEY.enter);
      await tui.waitFor('t try it');
      await tui.press('t');
      const form = await tui.waitFor('"title":"text"');
      expect(form).toContain('Try PUT /api/shop/products/:id');
      expect(form).toMatch(/^Record id: *$/m);
      expect(form).toContain('Enter: next   Tab/↑↓: field');
      // Enter goes from the id to the body, and from the body sends: without an id nothing is sent.
      await tui.press(KEY.enter, KEY.enter);
      await tui.waitFor('Record id is needed');
      await tui.type(id);
      await tui.press(KEY.enter, '\u0015');
      await tui.type('{"title":"Middlemarch (2nd ed.)","price":7}');
      await tui.press(KEY.enter);
      const replaced = await tui.waitFor('Status 200');
      expect(replaced).toContain(`"_id": "${id}"`);
      expect(replaced).toContain('"title": "Middlemarch (2nd ed.)"');
      expect(replaced).toContain(`Record id: ${id}`);
      expect(replaced).toContain('e: edit id, body');
      const stored = await server.api('GET', `/api/shop/products/${id}`);
      expect(stored.body.data).toMatchObject({ title: 'Middlemarch (2nd ed.)', price: 7 });
      // Sent again without the id: the problem is shown, not the answer to the earlier call.
      await tui.press('e', '\u0015', KEY.enter, KEY.enter);
      const refused = await tui.waitFor('Record id is needed');
      expect(refused).not.toContain('Status 200');
      expect(refused).not.toContain('"title": "Middlemarch (2nd ed.)"');
    } finally {
      tui.unmount();
    }
  });

  it("tries a GET on a path with :params: one field per param, the record id left empty lists that path's records", async () => {
    for (const method of ['GET', 'POST']) {
      const items = { name: `Shop items ${method}`, path: '/api/shops/:shopId/items', method, accessType: 'public', schema: { title: { type: 'string' } } };
      expect((await server.api('POST', '/api/endpoints', { token, body: items })).status).toBe(201);
    }
    expect((await server.api('POST', '/api/shops/north/items', { body: { title: 'Compass' } })).status).toBe(201);
    expect((await server.api('POST', '/api/shops/south/items', { body: { title: 'Sextant' } })).status).toBe(201);
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      await tui.waitFor('/api/shop/orders');
      await tui.press('/');
      await tui.type('Shop items GET');
      await tui.press(KEY.enter, KEY.enter);
      await tui.waitFor('t try it');
      await tui.press('t');
      const form = await tui.waitFor(':shopId:');
      expect(form).toContain('Try GET /api/shops/:shopId/items');
      expect(form).toContain('Record id: (empty: list)');
      await tui.type('north');
      await tui.press(KEY.enter, KEY.enter);
      const listed = await tui.waitFor('Status 200');
      expect(listed).toContain('"title": "Compass"');
      expect(listed).not.toContain('Sextant');
      expect(listed).toContain('e: edit :shopId, id');
    } finally {
      tui.unmount();
    }
  });

  it('scrolls an answer taller than the screen with j/k, PgDn and g/G', async () => {
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      await tui.waitFor('/api/shop/orders');
      await tui.press('/');
      await tui.type('List products');
      await tui.press(KEY.enter, KEY.enter);
      await tui.waitFor('t try it');
      await tui.press('t');
      await tui.waitFor('Record id: (empty: list)');
      await tui.press(KEY.enter);
      const first = await tui.waitFor(/lines 1–(\d+) of (\d+)/);
      const [, shown, all] = /lines 1–(\d+) of (\d+)/.exec(first)!.map(Number);
      expect(all).toBeGreaterThan(shown!);
      expect(first).toContain('"success": true');
      await tui.press('j');
      await tui.waitFor(`lines 2–${shown! + 1} of ${all}`);
      await tui.press('G');
      const end = await tui.waitFor(`lines ${all! - shown! + 1}–${all} of ${all}`);
      expect(end).not.toContain('"success": true');
      expect(end).toContain('"meta"');
      await tui.press('g');
      await tui.waitFor(`lines 1–${shown} of ${all}`);
      await tui.press('\u001B[6~');
      await tui.waitFor(`lines ${shown! + 1}–`);
    } finally {
      tui.unmount();
    }
  });

  it('pages the records of an endpoint, shows one as JSON and deletes it after y', async () => {
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      await tui.waitFor('/api/shop/orders');
      await tui.press('/');
      await tui.type('List products');
      await tui.press(KEY.enter, KEY.enter);
      await tui.waitFor('d records');
      await tui.press('d');
      const records = await tui.waitFor(/Records of \/api\/shop\/products {2}page 1\/1, \d in all/);
      expect(records).toContain('"title":"Dune"');
      const total = Number(/(\d) in all/.exec(records)![1]);
      await tui.press(KEY.enter);
      await tui.waitFor('"resourcePath": "/api/shop/products"');
      await tui.press('x');
      await tui.waitFor(/delete record [0-9a-f]{24}\? \[y\/N\]/);
      await tui.press('y');
      await tui.waitFor(`${total - 1} in all`);
      expect(tui.frame()).toContain('✓ deleted');
      // The line answers that key; the next one is about something else.
      await tui.press('j');
      await tui.waitFor(/^(?![\s\S]*✓ deleted)/);
    } finally {
      tui.unmount();
    }
  });
});
