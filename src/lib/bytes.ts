const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Parses sizes such as `1mb`, `512kb` or `2048` (bytes). Returns null when the text is not a size. */
export function parseByteSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(text);
  if (!match) return null;
  const unit = UNITS[(match[2] ?? 'b').toLowerCase()] ?? 1;
  const bytes = Math.floor(Number(match[1]) * unit);
  return bytes > 0 ? bytes : null;
}
