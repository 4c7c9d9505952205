// A CodeMirror 6 editor (JavaScript or JSON) as a Preact component, with an error shown at its
// line (a compile error from the API: "… at line 3, column 15 …"). Only the pages that edit code
// import it, so CodeMirror is in their chunks, not in the first load.
import { basicSetup } from 'codemirror';
import { javascript } from '@codemirror/lang-javascript';
import { json } from '@codemirror/lang-json';
import { setDiagnostics } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { Component, type RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

// The server puts a fresh CSP nonce into the page for each load; CodeMirror's <style> carries it.
const nonce = document.querySelector<HTMLMetaElement>('meta[name="dyn-csp-nonce"]')?.content ?? '';

/**
 * Uncontrolled: `value` is the initial text; edits are reported through `onChange`. To load other
 * text, give the component a new `key`. (Writing the parent's value back on every render races
 * the typing: an effect from an older render would replace newer keystrokes.)
 */
export interface CodeEditorProps {
  value: string;
  onChange: (value: string) => void;
  language: 'javascript' | 'json';
  /** An error message; when it names a line (`line 3`, `column 15`), it is marked there. */
  error?: string | null;
  label: string;
  readOnly?: boolean;
}

/** The line and column an error message names, if any. */
export function errorPosition(message: string): { line: number; column: number } | null {
  const match = message.match(/line (\d+)(?:, column (\d+))?/i) ?? message.match(/position (\d+) \(line (\d+) column (\d+)\)/i);
  if (!match) return null;
  if (match.length === 4 && match[3]) return { line: Number(match[2]), column: Number(match[3]) };
  return { line: Number(match[1]), column: Number(match[2] ?? 1) };
}

export default function CodeEditor(props: CodeEditorProps) {
  const box = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChange = useRef(props.onChange);
  onChange.current = props.onChange;

  useEffect(() => {
    view.current = new EditorView({
      parent: box.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          basicSetup,
          EditorView.cspNonce.of(nonce),
          props.language === 'json' ? json() : javascript(),
          EditorState.readOnly.of(!!props.readOnly),
          EditorView.contentAttributes.of({ 'aria-label': props.label }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChange.current(update.state.doc.toString());
          }),
        ],
      }),
    });
    return () => view.current?.destroy();
  }, []);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const at = props.error ? errorPosition(props.error) : null;
    if (!props.error) return void v.dispatch(setDiagnostics(v.state, []));
    const doc = v.state.doc;
    const line = doc.line(Math.min(Math.max(1, at?.line ?? 1), doc.lines));
    const from = Math.min(line.from + Math.max(0, (at?.column ?? 1) - 1), line.to);
    v.dispatch(setDiagnostics(v.state, [{ from, to: Math.max(from, line.to), severity: 'error', message: props.error }]));
  }, [props.error]);

  return <Host box={box} />;
}

/** The editor's element: rendered once and never diffed again, so Preact leaves CodeMirror's DOM alone. */
class Host extends Component<{ box: RefObject<HTMLDivElement | null> }> {
  override shouldComponentUpdate(): boolean {
    return false;
  }
  override render() {
    return <div class="cm-wrap" ref={this.props.box} />;
  }
}
