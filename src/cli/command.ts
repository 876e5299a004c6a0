import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A subcommand of `headroom`. Each lives in its own module under src/cli/. */
export interface Command {
  name: string;
  summary: string;
  /** Full help text, printed by `headroom NAME --help`. */
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  allowPositionals?: boolean;
  run(values: Record<string, string | boolean | string[] | boolean[] | undefined>, positionals: string[]): Promise<number>;
}

/** Bad input or a failed operation: printed as one line, exit code 1. */
export class CliError extends Error {
  readonly exitCode: number = 1;
}

/** Bad invocation: printed as one line, exit code 2. */
export class UsageError extends CliError {
  override readonly exitCode: number = 2;
}

/**
 * The exit code an error asks for, or undefined for an unexpected error. Read
 * structurally rather than with instanceof: a module loaded twice (e.g. through a
 * test loader and a dynamic import) has two copies of these classes.
 */
export function exitCodeOf(err: unknown): number | undefined {
  const code = (err as { exitCode?: unknown } | null)?.exitCode;
  return err instanceof Error && typeof code === 'number' ? code : undefined;
}

export function parseCommandArgs(cmd: Command, argv: string[]) {
  try {
    return parseArgs({ args: argv, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: cmd.allowPositionals ?? false, strict: true });
  } catch (err) {
    throw new UsageError(`${cmd.name}: ${(err as Error).message.split('\n')[0]}`);
  }
}
