import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './logger.js';
import { UsageError } from './command.js';

/** `--log-level` / `--log-format` of a command, checked: a bad value is a one-line usage error. */
export function parseLogOptions(values: Record<string, unknown>, command: string, defaultFormat: LogFormat): { level: LogLevel; format: LogFormat } {
  const level = (values['log-level'] as string | undefined) ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new UsageError(`${command}: --log-level must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
  const format = (values['log-format'] as string | undefined) ?? defaultFormat;
  if (!(LOG_FORMATS as readonly string[]).includes(format)) throw new UsageError(`${command}: --log-format must be json or text, got "${format}"`);
  return { level: level as LogLevel, format: format as LogFormat };
}
