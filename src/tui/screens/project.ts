// Project (to come).
import React from 'react';
import { Text } from 'ink';

export function ProjectScreen(): React.ReactElement {
  return React.createElement(Text, null, 'Project');
}
