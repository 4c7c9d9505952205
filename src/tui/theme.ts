// Colours of the TUI, and NO_COLOR: every colour goes through `tone`, which gives none when the
// user asked for none (https://no-color.org). Selection uses inverse video, which is not a colour.

export type Tone = 'green' | 'red' | 'yellow' | 'cyan' | 'magenta' | 'blue' | 'gray';

let colorOn = !('NO_COLOR' in process.env && process.env.NO_COLOR !== '');

/** Turns colours on or off for the whole app (main.ts reads NO_COLOR from the CLI's environment). */
export function setColor(enabled: boolean): void {
  colorOn = enabled;
}

/** The colour to pass to Ink's `<Text color>`, or undefined with NO_COLOR. */
export function tone(color: Tone): Tone | undefined {
  return colorOn ? color : undefined;
}

/** The colour of an HTTP status: 2xx green, 3xx cyan, 4xx yellow, 5xx red. */
export function statusTone(status: number | null | undefined): Tone | undefined {
  if (!status) return undefined;
  if (status >= 500) return tone('red');
  if (status >= 400) return tone('yellow');
  if (status >= 300) return tone('cyan');
  return tone('green');
}
