import { main } from '../../../src/cli/main.js';

/** Runs main() with console output captured: its exit code and what it printed on stderr. */
export async function runMain(argv: string[]): Promise<{ code: number; err: string }> {
  const err: string[] = [];
  const { log, error } = console;
  console.log = () => {};
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    return { code: await main(argv), err: err.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}
