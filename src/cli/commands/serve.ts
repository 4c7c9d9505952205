import type { CommandModule } from '../context.ts';
import { applyRuntimeV8Flags, execWithServerFlags } from '../server-flags.ts';

/**
 * `dynctl serve`: the server itself. Its modules (Koa, the stores, isolated-vm) are imported
 * when this command runs, so the client commands start without loading them.
 */
export const serveCommand: CommandModule = {
  register(program) {
    program
      .command('serve')
      .description('start the dyn server (configured by environment variables; see README)')
      .action(async () => {
        await serve();
      });
  },
};

async function serve(): Promise<void> {
  execWithServerFlags();
  applyRuntimeV8Flags();
  const [{ ConfigError, loadConfig }, { createLogger }, { StartupError }, { startServer }] = await Promise.all([
    import('../../config.ts'),
    import('../../lib/logger.ts'),
    import('../../services/bootstrap.ts'),
    import('../../server.ts'),
  ]);
  type RunningServer = Awaited<ReturnType<typeof startServer>>;
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`dyn: invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  let server: RunningServer | undefined;
  let stopping = false;
  const close = (running: RunningServer): void => {
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error });
        process.exit(1);
      },
    );
  };
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received: finishing requests in flight, then closing`);
    if (server) close(server);
  };
  // Installed before the ready line is printed: a signal sent as soon as it appears must not
  // meet the default disposition (killed by the signal instead of a clean exit 0).
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    server = await startServer(config, logger);
  } catch (error) {
    const message = error instanceof StartupError ? error.message : `could not start: ${(error as Error).message}`;
    // Like configuration errors: one line on stderr, whatever LOG_LEVEL says.
    process.stderr.write(`dyn: ${message}\n`);
    process.exit(1);
  }
  if (stopping) close(server);
}
