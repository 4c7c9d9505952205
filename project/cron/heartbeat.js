// Runs in a sandbox (isolated-vm): no require, process, network or timers. What it logs and
// returns is kept with the run.
async function run() {
  const now = new Date().toISOString();
  console.log(`heartbeat at ${now}`);
  return { ok: true, at: now };
}
