/**
 * Preloaded into the dyn server process by bench/run.ts (`node --import ./bench/report-port.ts
 * bin/dynctl.js serve`): dyn is started with PORT=0 and LOG_LEVEL=warn, so it prints no URL;
 * this reports the port it bound to the parent over IPC, and shuts the server down cleanly
 * (SIGTERM) if the parent goes away without stopping it. It changes nothing else.
 */
import { Server } from 'node:net';

if (process.send) {
  const listen = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    this.once('listening', () => {
      const address = this.address();
      if (address && typeof address === 'object') process.send?.({ port: address.port });
    });
    return (listen as (...a: unknown[]) => Server).apply(this, args);
  } as typeof listen;
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
