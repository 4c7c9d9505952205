// The screens of `dynctl tui`, in the order of their number keys. A screen is one file exporting
// a component; adding one is that file and one line here (the palette, the help and the tabs
// read this table).
import type React from 'react';
import { ApiKeysScreen } from './api-keys.ts';
import { CronScreen } from './cron.ts';
import { DashboardScreen } from './dashboard.ts';
import { EndpointsScreen } from './endpoints.ts';
import { LogsScreen } from './logs.ts';
import { ProjectScreen } from './project.ts';
import { UsersScreen } from './users.ts';
import { WebhooksScreen } from './webhooks.ts';

export interface ScreenSpec {
  /** What `:` completes and the tab shows. */
  name: string;
  key: string;
  /** One line for the help. */
  about: string;
  component: React.ComponentType;
}

export const SCREENS: readonly ScreenSpec[] = [
  { name: 'dashboard', key: '1', about: 'counts, 7-day sparklines, automation health', component: DashboardScreen },
  { name: 'endpoints', key: '2', about: 'definitions: search, detail, try it, records', component: EndpointsScreen },
  { name: 'logs', key: '3', about: 'the audit log, live (like tail -f), with an action filter', component: LogsScreen },
  { name: 'cron', key: '4', about: 'cron jobs: next run, last status, run now, history', component: CronScreen },
  { name: 'webhooks', key: '5', about: 'webhooks: health, deliveries, test', component: WebhooksScreen },
  { name: 'keys', key: '6', about: 'API keys: create (shown once), revoke', component: ApiKeysScreen },
  { name: 'users', key: '7', about: 'users and groups: disable, enable, unlock', component: UsersScreen },
  { name: 'project', key: '8', about: 'project directory: problems, plan against a local dir, apply', component: ProjectScreen },
];

/** Screens whose name starts with what was typed (the palette's completion). */
export function completeScreen(typed: string): ScreenSpec[] {
  const prefix = typed.trim().toLowerCase();
  return SCREENS.filter((screen) => screen.name.startsWith(prefix));
}
