// Runs in a sandbox (isolated-vm): no require, process, network or timers.
// `db` reads and writes the records of /api/shop/orders only.
async function handler(req, db) {
  const { productId, quantity } = req.body;
  if (!/^[0-9a-f]{24}$/.test(productId)) {
    return { status: 400, data: { error: 'productId must be a product id' } };
  }
  const order = await db.create({ productId, quantity, status: 'placed' });
  const open = await db.find({ status: 'placed' }, { limit: 1000 });
  return { status: 201, data: { order, openOrders: open.length } };
}
