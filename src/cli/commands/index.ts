import type { CommandModule } from '../context.ts';
import { callCommand } from './call.ts';
import { cronCommands } from './cron.ts';
import { discoveryCommands } from './discovery.ts';
import { contextCommands } from './contexts.ts';
import { endpointsCommands } from './endpoints.ts';
import { keysCommands } from './keys.ts';
import { logsCommand } from './logs.ts';
import { projectCommands } from './project.ts';
import { serveCommand } from './serve.ts';
import { sessionCommands } from './session.ts';
import { statusCommand } from './status.ts';
import { tuiCommand } from './tui.ts';
import { usersCommands } from './users.ts';
import { webhooksCommands } from './webhooks.ts';

/**
 * Every dynctl command, in the order `dynctl --help` lists them. A command (or group) is one
 * file exporting a CommandModule; adding one is that file and one line here.
 */
export const COMMANDS: readonly CommandModule[] = [
  serveCommand,
  sessionCommands,
  contextCommands,
  statusCommand,
  projectCommands,
  endpointsCommands,
  keysCommands,
  cronCommands,
  usersCommands,
  webhooksCommands,
  callCommand,
  logsCommand,
  discoveryCommands,
  tuiCommand,
];
