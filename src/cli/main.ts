import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from '../config.ts';
import { createLogger } from '../lib/logger.ts';
import { StartupError } from '../services/bootstrap.ts';
import { startServer, type RunningServer } from '../server.ts';

/** dynctl: `serve` now; login, validate, diff, apply and the rest come with the GitOps issue. */
export async function main(argv: string[]): Promise<void> {
  const program = new Command();
  program.name('dynctl').description('dyn: define REST endpoints at runtime and manage them as code').version('0.1.0');
  program.exitOverride();

  program
    .command('serve')
    .description('start the dyn server (configured by environment variables; see README)')
    .action(async () => {
      await serve();
    });

  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
    throw error;
  }
}

async function serve(): Promise<void> {
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
