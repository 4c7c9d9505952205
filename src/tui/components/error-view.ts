// A failed call as the user needs to see it: the API's message, its status, and every `details`
// entry (field: message), or the network error's one line.
import React from 'react';
import { Box, Text } from 'ink';
import { ApiError } from '../../cli/errors.ts';
import { safe } from '../format.ts';
import { tone } from '../theme.ts';

const h = React.createElement;

/** The lines of an error; the API's message and details are the server's text, so made safe. */
export function errorLines(error: unknown): string[] {
  if (error instanceof ApiError) {
    return [`${safe(error.message)} [HTTP ${error.status}]`, ...(error.details ?? []).map((detail) => `  ${safe(String(detail.field))}: ${safe(String(detail.message))}`)];
  }
  return [safe(error instanceof Error ? error.message : String(error))];
}

export function ErrorView({ error, max = 6 }: { error: unknown; max?: number }): React.ReactElement {
  const lines = errorLines(error);
  const shown = lines.slice(0, max);
  return h(
    Box,
    { flexDirection: 'column' },
    ...shown.map((line, index) => h(Text, { key: index, color: tone('red'), wrap: 'truncate' }, index === 0 ? `✗ ${line}` : line)),
    lines.length > max ? h(Text, { key: 'more', dimColor: true }, `  … ${lines.length - max} more`) : null,
  );
}
