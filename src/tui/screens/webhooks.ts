// Webhooks (to come).
import React from 'react';
import { Text } from 'ink';

export function WebhooksScreen(): React.ReactElement {
  return React.createElement(Text, null, 'Webhooks');
}
