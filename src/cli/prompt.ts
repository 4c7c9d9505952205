import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError, EXIT } from './errors.ts';

/**
 * Asks one question on the terminal (prompt on stderr, so stdout stays clean). With `hidden`,
 * what is typed is not echoed: readline writes to a stream that goes quiet once the prompt
 * is out.
 */
export function ask(question: string, options: { hidden?: boolean } = {}): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      if (!muted) process.stderr.write(chunk);
      callback();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve, reject) => {
    rl.on('SIGINT', () => {
      rl.close();
      process.stderr.write('\n');
      reject(new CliError('cancelled', EXIT.interrupted));
    });
    rl.question(question, (answer) => {
      rl.close();
      if (options.hidden) process.stderr.write('\n');
      resolve(answer);
    });
    // question() has written the prompt synchronously; from here on, keystrokes are not shown.
    muted = options.hidden ?? false;
  });
}

/** All of stdin, as text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
