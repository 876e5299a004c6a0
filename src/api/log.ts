/**
 * The log port the loops are handed (clock, log and solve are injected). A line about
 * one object names it, so JSON logs carry `kind`, `namespace` and `name` fields, as
 * Karpenter's do, and an operator can filter on them. Implementations: the CLI's pino
 * logger (src/cli/logger.ts); tests pass a function that collects lines.
 */
export interface LogSubject {
  kind: string;
  namespace?: string;
  name: string;
}

export type Log = (message: string, about?: LogSubject) => void;
