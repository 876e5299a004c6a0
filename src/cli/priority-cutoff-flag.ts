import { UsageError } from './command.js';

/** --expendable-pods-priority-cutoff (controller and plan): a whole number in a pod priority's int32 range. */
export function parsePriorityCutoff(raw: string, command: string): number {
  const v = /^[+-]?\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(v >= -(2 ** 31) && v < 2 ** 31)) throw new UsageError(`${command}: --expendable-pods-priority-cutoff must be a whole number (an int32 priority), got "${raw}"`);
  return v;
}
