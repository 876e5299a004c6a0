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

/** Bad invocation: printed as one line, exit code 2. */
export class UsageError extends Error {}

/** Bad input or a failed operation: printed as one line, exit code 1. */
export class CliError extends Error {}

export function parseCommandArgs(cmd: Command, argv: string[]) {
  try {
    return parseArgs({ args: argv, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: cmd.allowPositionals ?? false, strict: true });
  } catch (err) {
    throw new UsageError(`${cmd.name}: ${(err as Error).message.split('\n')[0]}`);
  }
}
