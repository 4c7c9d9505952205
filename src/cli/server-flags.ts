import { setFlagsFromString } from 'node:v8';

/**
 * The V8 settings `dynctl serve` runs with, for a resident set that stays flat under streamed
 * exports and imports (README, "Scale"):
 *
 * - A young generation of at most 16 MB per semi-space. V8 sizes it from the machine's memory,
 *   up to 64 MB per semi-space on a large one (about 130 MB resident once a long stream has grown
 *   it), and nothing dyn keeps is that short-lived and that large. Measured: no change in
 *   requests per second. Only a command-line flag (or NODE_OPTIONS) sets it.
 * - No allocation-site pretenuring. A page of an export or an import batch lives across a few
 *   scavenges, so V8 learns to allocate such objects in the old generation, which only a full
 *   collection frees: 30 MB more heap every 100 ms of an export, and peaks of 400–500 MB. This one
 *   V8 reads as it runs, so it is set here.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];
const RUNTIME_V8_FLAGS = ['--no-allocation-site-pretenuring'];

/** A Node flag given on the command line or in NODE_OPTIONS: the operator's choice wins. */
function flagGiven(flag: string): boolean {
  const name = flag.split('=')[0] as string;
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return given.some((arg) => arg === name || arg.startsWith(`${name}=`));
}

/**
 * Runs this process again, in place (same PID, same stdio, so signals, exit codes and kill -9 mean
 * what they meant), with SERVER_NODE_FLAGS when one is missing. Not when the process has an IPC
 * channel (it would not survive the exec: such a parent, like the benchmark, passes the flags
 * itself), nor where Node cannot exec (Windows): there the server runs with V8's defaults.
 */
export function execWithServerFlags(): void {
  const missing = SERVER_NODE_FLAGS.filter((flag) => !flagGiven(flag));
  if (missing.length === 0 || process.channel || typeof process.execve !== 'function') return;
  const [script, ...args] = process.argv.slice(1);
  if (!script) return;
  try {
    process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, script, ...args], process.env);
  } catch {
    // Not replaced (the call returns only on failure): serve as this process is.
  }
}

/** V8 flags that take effect at run time; set before the server allocates much. */
export function applyRuntimeV8Flags(): void {
  for (const flag of RUNTIME_V8_FLAGS) setFlagsFromString(flag);
}
