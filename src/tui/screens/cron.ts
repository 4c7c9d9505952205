// Cron jobs (to come).
import React from 'react';
import { Text } from 'ink';

export function CronScreen(): React.ReactElement {
  return React.createElement(Text, null, 'Cron jobs');
}
