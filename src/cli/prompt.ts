import { CliError } from './common.js';

/** All of standard input, without one trailing newline. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/**
 * Asks each question on the terminal (stderr) and reads one line per question from a TTY stdin
 * without echoing it (passwords). Backspace deletes, Ctrl-C or Ctrl-D on an empty line cancels.
 */
export function askHidden(questions: readonly string[]): Promise<string[]> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return Promise.reject(new CliError('standard input is not a terminal: pipe the password in or use --password-stdin'));
  return new Promise((resolve, reject) => {
    const answers: string[] = [];
    let line: string[] = [];
    const finish = (err?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      if (err) {
        process.stderr.write('\n');
        reject(err);
      } else resolve(answers);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') {
          answers.push(line.join(''));
          line = [];
          process.stderr.write('\n');
          if (answers.length === questions.length) return finish();
          process.stderr.write(questions[answers.length]);
        } else if (ch === '\u0003' || (ch === '\u0004' && line.length === 0)) {
          return finish(new CliError('cancelled'));
        } else if (ch === '\u007f' || ch === '\b') {
          line.pop();
        } else if (ch >= ' ') {
          line.push(ch);
        }
      }
    };
    // Echo off before the question appears: whatever is typed (or pasted) after it stays hidden.
    stdin.setRawMode(true);
    process.stderr.write(questions[0]);
    stdin.setEncoding('utf8');
    stdin.on('data', onData);
    stdin.resume();
  });
}
