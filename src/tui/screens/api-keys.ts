// API keys (to come).
import React from 'react';
import { Text } from 'ink';

export function ApiKeysScreen(): React.ReactElement {
  return React.createElement(Text, null, 'API keys');
}
