import { existsSync, readFileSync } from 'node:fs';
import { type Command, UsageError, exitCodeOf, parseCommandArgs } from './command.js';

/**
 * Subcommands, loaded lazily so `headroom plan` does not pay for the controller's imports.
 * Exported for the docs' drift test (docs/reference.md lists every option of each).
 */
export const commands: Record<string, () => Promise<Command>> = {
  plan: async () => (await import('./plan.js')).planCommand,
  controller: async () => (await import('./controller.js')).controllerCommand,
  simulate: async () => (await import('./simulate.js')).simulateCommand,
  'dev-cluster': async () => (await import('./dev-cluster.js')).devClusterCommand,
  serve: async () => (await import('./serve.js')).serveCommand,
};

/** The flags of `headroom` itself, before any command (for the docs' drift test). */
export const TOP_LEVEL_FLAGS = ['--help', '--version'];

/**
 * The version in Headroom's package.json: two folders up from src/cli, three from
 * dist/src/cli (the image keeps package.json beside dist/).
 */
export function headroomVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    const file = new URL(up, import.meta.url);
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'headroom' && pkg.version) return pkg.version;
  }
  return 'unknown';
}

function topLevelHelp(loaded: Command[]): string {
  const width = Math.max(...loaded.map((c) => c.name.length), 4);
  return [
    'headroom: a predictive node autoscaler for Cluster API clusters',
    '',
    'Usage: headroom <command> [options]',
    '       headroom --version',
    '',
    'Commands:',
    ...loaded.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `headroom <command> --help` for a command\'s options.',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (!name || name === '--help' || name === '-h' || name === 'help') {
      const loaded = await Promise.all(Object.values(commands).map((load) => load()));
      console.log(topLevelHelp(loaded));
      return name ? 0 : 2;
    }
    if (name === '--version' || name === 'version') {
      console.log(`headroom ${headroomVersion()}`);
      return 0;
    }
    const load = commands[name];
    if (!load) throw new UsageError(`unknown command "${name}" (see headroom --help)`);
    const cmd = await load();
    const { values, positionals } = parseCommandArgs(cmd, rest);
    if (values.help) {
      console.log(cmd.usage);
      return 0;
    }
    return await cmd.run(values, positionals);
  } catch (err) {
    const code = exitCodeOf(err);
    if (code !== undefined) {
      console.error(`headroom: ${(err as Error).message}`);
      return code;
    }
    console.error(`headroom: ${(err as Error)?.message ?? String(err)}`.split('\n')[0]);
    return 1;
  }
}
