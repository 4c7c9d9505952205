// Project: the server's watched directory (GET /api/project/status: watching, last reconcile,
// problems with file and line), and a local project directory against the server — `p` loads
// it as `dynctl validate` does and plans it (POST /api/project/plan), shown like `dynctl diff`
// (+ create, ~ update with its fields, - delete); `a` applies it after a y/N question (without
// prune: definitions only on the server are kept). `e` changes the local directory.
import React from 'react';
import { Box, Text } from 'ink';
import type { ProjectApplyResult, ProjectBundle, ProjectChange, ProjectPlan } from '../../cli/client.ts';
import { changeTitleOf, fieldLines } from '../../cli/plan-text.ts';
import type { Problem } from '../../project/problem.ts';
import type { ProjectStatusView } from '../../project/status.ts';
import { Busy } from '../components/busy.ts';
import { Confirm } from '../components/confirm.ts';
import { ErrorView } from '../components/error-view.ts';
import { TextField } from '../components/text-field.ts';
import { clip, safe, when } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useCapture, useSession } from '../session.ts';
import { tone } from '../theme.ts';
import { useAction, useRequest } from '../use-request.ts';

const h = React.createElement;

interface LocalPlan {
  dir: string;
  problems: Problem[];
  bundle: ProjectBundle | null;
  plan: ProjectPlan | null;
}

const SYMBOL = { create: '+', update: '~', delete: '-' } as const;
const COLOR = { create: 'green', update: 'yellow', delete: 'red' } as const;

/**
 * The plan as the lines `dynctl diff` prints (plan-text.ts): one per change, named as written in
 * the bundle, then one `    path: from → to` per changed value; names and values made safe (format.ts).
 */
export function planLines(changes: readonly ProjectChange[], bundle: ProjectBundle | null = null): Array<{ text: string; action: ProjectChange['action'] }> {
  const title = changeTitleOf(bundle);
  const lines: Array<{ text: string; action: ProjectChange['action'] }> = [];
  for (const change of changes) {
    lines.push({ text: `${SYMBOL[change.action]} ${safe(title(change))}`, action: change.action });
    const { lines: fields, more } = fieldLines(change);
    for (const field of fields) lines.push({ text: safe(`    ${field.path}: ${field.from} → ${field.to}`), action: change.action });
    if (more > 0) lines.push({ text: `    … ${more} more`, action: change.action });
  }
  return lines;
}

/** `file:line: path message`, the file relative to `dir` when it is inside it (80 columns are few). */
function formatProblem(problem: Problem, dir?: string): string {
  const base = dir?.replace(/\/+$/, '');
  const file = base && problem.file?.startsWith(`${base}/`) ? problem.file.slice(base.length + 1) : problem.file;
  const where = file === undefined ? '' : `${file}${problem.line === undefined ? '' : `:${problem.line}`}: `;
  return safe(`${where}${problem.path ? `${problem.path} ` : ''}${problem.message}`);
}

export function ProjectScreen(): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const status = useRequest((signal) => session.client.projectStatus({ signal }) as Promise<ProjectStatusView | null>, []);
  const [dir, setDir] = React.useState(session.projectDir);
  // `e` edits a draft of the directory: Enter makes it the directory, Esc leaves the directory as it was.
  const [draft, setDraft] = React.useState<string | null>(null);
  const editing = draft !== null;
  const [confirming, setConfirming] = React.useState(false);
  const [notice, setNotice] = React.useState<string | null>(null);
  const [scroll, setScroll] = React.useState(0);
  // Where the plan's lines can scroll to, and a page of them, as last drawn (below).
  const lastScroll = React.useRef(0);
  const page = React.useRef(1);
  const scrollTo = (at: number): void => setScroll(Math.max(0, Math.min(lastScroll.current, at)));
  const canApply = session.can('manage_api');
  useCapture(editing);
  const plan = useAction<LocalPlan>();
  // The plan shown is what was applied: clear it (p plans again).
  const apply = useAction<ProjectApplyResult>(() => {
    plan.clear();
    status.reload();
  });

  const runPlan = (): void => {
    apply.clear();
    setNotice(null);
    plan.run(async (signal) => {
      // Loaded when asked for: src/project pulls in the handler compiler.
      const { loadProject } = await import('../../project/files.ts');
      const loaded = loadProject(dir);
      if (loaded.problems.length > 0) return { dir, problems: loaded.problems, bundle: null, plan: null };
      return { dir, problems: [], bundle: loaded.bundle, plan: await session.client.planProject(loaded.bundle, { prune: false, signal }) };
    });
  };

  useKeys(
    (input, key) => {
      if (key.escape) {
        if (status.loading) status.cancel();
        else if (plan.busy) plan.cancel();
        else if (apply.busy) apply.cancel();
      } else if (input === 'r') status.reload();
      else if (input === 'p') {
        setScroll(0);
        runPlan();
      } else if (input === 'j' || key.downArrow) scrollTo(scroll + 1);
      else if (input === 'k' || key.upArrow) scrollTo(scroll - 1);
      else if (key.pageDown || input === ' ') scrollTo(scroll + page.current);
      else if (key.pageUp) scrollTo(scroll - page.current);
      else if (input === 'g') scrollTo(0);
      else if (input === 'G') scrollTo(lastScroll.current);
      else if (input === 'e') setDraft(dir);
      else if (input === 'a' && canApply) {
        // Only the plan of the directory shown is applied, and only one with something to do.
        const planned = plan.result;
        if (!planned || planned.dir !== dir) setNotice(`plan ${dir} first (p)`);
        else if (!planned.bundle) setNotice('fix the problems first: nothing is sent');
        else if ((planned.plan?.changes.length ?? 0) === 0) setNotice('nothing to apply');
        else {
          setNotice(null);
          setConfirming(true);
        }
      }
    },
    { isActive: !session.overlay && !editing && !confirming },
  );
  const setDirectory = (value: string): void => {
    const next = value.trim();
    if (next && next !== dir) {
      // Another directory: the plan shown was another directory's, so it goes (p plans this one).
      plan.clear();
      apply.clear();
      setNotice(null);
      setDir(next);
    }
    setDraft(null);
  };

  const view = status.data;
  const serverLines: React.ReactNode[] = [];
  if (view === null) serverLines.push(h(Text, { key: 'none', dimColor: true }, 'this server has no project routes'));
  else if (view) {
    const last = view.lastReconcile;
    serverLines.push(
      h(Text, { key: 'dir', wrap: 'truncate' }, `Server dir ${safe(view.dir)}  `, h(Text, { color: view.watching ? tone('green') : tone('gray') }, view.watching ? 'watching' : 'not watching')),
      h(
        Text,
        { key: 'last', wrap: 'truncate' },
        'Last sync  ',
        last ? h(Text, { color: last.ok ? tone('green') : tone('red') }, `${when(last.at)} ${last.ok ? `ok (+${last.summary.create} ~${last.summary.update} -${last.summary.delete})` : `failed: ${safe(last.error ?? '')}`}`) : 'never',
      ),
      ...view.problems.slice(0, 4).map((problem, index) => h(Text, { key: `p${index}`, color: tone('red'), wrap: 'truncate' }, `  ${formatProblem(problem, view.dir)}`)),
      view.problems.length > 4 ? h(Text, { key: 'more', dimColor: true }, `  … ${view.problems.length - 4} more problems`) : null,
    );
  }

  const result = plan.result;
  const local: React.ReactNode[] = [];
  if (result) {
    if (result.problems.length > 0) {
      local.push(h(Text, { key: 'ph', color: tone('red') }, `${result.problems.length} problem(s), nothing is sent:`));
      for (const [index, problem] of result.problems.entries()) local.push(h(Text, { key: `lp${index}`, color: tone('red'), wrap: 'truncate' }, `  ${formatProblem(problem, result.dir)}`));
    } else if (result.plan) {
      const lines = planLines(result.plan.changes, result.bundle);
      if (lines.length === 0) local.push(h(Text, { key: 'same', color: tone('green') }, `No differences: apply would change nothing from ${safe(result.dir)}.`));
      for (const [index, line] of lines.entries()) local.push(h(Text, { key: `c${index}`, color: tone(COLOR[line.action]), wrap: 'truncate' }, line.text));
      const s = result.plan.summary;
      if (lines.length > 0) local.push(h(Text, { key: 'sum' }, `Plan: ${s.create} to create, ${s.update} to update, ${s.delete} to delete.`));
    }
  }
  const room = Math.max(2, rows - 4 - serverLines.length - (confirming || apply.busy || apply.result || apply.error ? 1 : 0));
  lastScroll.current = local.length > room ? local.length - room + 1 : 0;
  page.current = Math.max(1, room - 1);
  const from = Math.min(scroll, lastScroll.current);
  const shownLocal =
    local.length > room ? [...local.slice(from, from + room - 1), h(Text, { key: 'cut', dimColor: true }, `lines ${from + 1}-${from + room - 1} of ${local.length}  (j/k, PgUp/PgDn, g/G scroll)`)] : local;
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, 'Project', h(Text, { dimColor: true }, `  p plan  ${canApply ? 'a apply  ' : ''}e change dir  j/k g/G scroll  r reload`)),
    status.loading ? h(Busy, { label: 'loading the project status' }) : null,
    status.error ? h(ErrorView, { error: status.error }) : null,
    ...serverLines,
    h(
      Box,
      null,
      h(Text, null, 'Local dir  '),
      draft !== null
        ? h(TextField, { focus: !session.overlay, value: draft, selected: true, onChange: setDraft, onSubmit: setDirectory, onCancel: () => setDraft(null) })
        : h(Text, { wrap: 'truncate' }, clip(dir, columns - 12)),
    ),
    plan.busy ? h(Busy, { label: `planning ${dir}` }) : null,
    plan.error ? h(ErrorView, { error: plan.error }) : null,
    notice ? h(Text, { color: tone('yellow') }, notice) : null,
    ...shownLocal,
    confirming
      ? h(Confirm, {
          question: `apply ${result?.dir ?? dir} to ${session.client.server}?`,
          onAnswer: (yes: boolean) => {
            setConfirming(false);
            const bundle = result?.bundle;
            if (yes && bundle) apply.run((signal) => session.client.applyProject(bundle, { prune: false, dryRun: false, signal }));
          },
        })
      : null,
    apply.busy ? h(Busy, { label: 'applying' }) : null,
    apply.error ? h(ErrorView, { error: apply.error }) : null,
    apply.result ? h(Text, { color: tone('green') }, `✓ applied: ${apply.result.summary.create} created, ${apply.result.summary.update} updated, ${apply.result.summary.delete} deleted`) : null,
  );
}
