import React from 'react';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { TextField, type TextFieldProps } from '../../src/tui/components/text-field.ts';
import { KeyboardProvider } from '../../src/tui/keys.ts';
import { setColor } from '../../src/tui/theme.ts';
import { KEY } from '../helpers/tui.ts';

const CTRL_U = '\u0015';
const BACKSPACE = '\u007F';
const LEFT = '\u001B[D';

/** A TextField that owns its value, as a screen does; `events` records submit and cancel. */
function Field(props: Partial<TextFieldProps> & { initial: string; events: string[] }): React.ReactElement {
  const [value, setValue] = React.useState(props.initial);
  return React.createElement(TextField, {
    value,
    onChange: setValue,
    onSubmit: (submitted: string) => props.events.push(`submit ${submitted}`),
    onCancel: () => props.events.push(`cancel ${value}`),
    selected: props.selected,
    placeholder: props.placeholder,
  });
}

async function field(initial: string, options: Partial<TextFieldProps> = {}) {
  setColor(false);
  const events: string[] = [];
  const app = render(React.createElement(KeyboardProvider, null, React.createElement(Field, { initial, events, ...options })));
  const settle = () => new Promise((resolve) => setTimeout(resolve, 60));
  await settle();
  return {
    events,
    /** The field's text, without the cursor's trailing space. */
    text: () => (app.lastFrame() ?? '').trimEnd(),
    async send(...writes: string[]) {
      for (const write of writes) {
        app.stdin.write(write);
        await settle();
      }
    },
    /** Waits until the field shows `text` (keys that arrive together take a render each). */
    async until(text: string) {
      const deadline = Date.now() + 5_000;
      while ((app.lastFrame() ?? '').trimEnd() !== text && Date.now() < deadline) await settle();
      return (app.lastFrame() ?? '').trimEnd();
    },
    /** The events once there are any (each key waits for the render before it). */
    async eventsSoon() {
      const deadline = Date.now() + 5_000;
      while (events.length === 0 && Date.now() < deadline) await settle();
      return events;
    },
    unmount: () => app.unmount(),
  };
}

describe('TextField', () => {
  it('replaces a selected pre-filled value with what is typed', async () => {
    const f = await field('./project', { selected: true });
    await f.send('/tmp/x/proj2', KEY.enter);
    expect(await f.until('/tmp/x/proj2')).toBe('/tmp/x/proj2');
    expect(await f.eventsSoon()).toEqual(['submit /tmp/x/proj2']);
    f.unmount();
  });

  it('keeps a selected value to edit after an arrow', async () => {
    const f = await field('view', { selected: true });
    await f.send(LEFT, 'x');
    expect(await f.until('xview')).toBe('xview');
    f.unmount();
  });

  it('inserts at the cursor and deletes before it, one character per Backspace even when they come together', async () => {
    const f = await field('abcdef');
    await f.send(LEFT + LEFT, 'XY', BACKSPACE.repeat(3));
    expect(await f.until('abcef')).toBe('abcef');
    await f.send(BACKSPACE.repeat(30));
    expect(await f.until('ef')).toBe('ef');
    f.unmount();
  });

  it('clears on Ctrl+U instead of typing a u', async () => {
    const f = await field('viewview,bogus');
    await f.send(CTRL_U);
    expect(await f.until('')).toBe('');
    await f.send(`view${CTRL_U}manage_api`);
    expect(await f.until('manage_api')).toBe('manage_api');
    f.unmount();
  });

  it('hands Esc to its owner, and shows the placeholder while empty', async () => {
    const f = await field('', { placeholder: 'view' });
    expect(f.text()).toBe(' view');
    await f.send('abc', KEY.escape);
    expect(await f.eventsSoon()).toEqual(['cancel abc']);
    f.unmount();
  });
});
