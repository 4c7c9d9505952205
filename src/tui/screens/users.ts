// Users and groups (to come).
import React from 'react';
import { Text } from 'ink';

export function UsersScreen(): React.ReactElement {
  return React.createElement(Text, null, 'Users and groups');
}
