/**
 * Kubernetes resource.Quantity parsing. Quantities are parsed once at the boundary
 * into plain numbers in base units (cores are kept as millicores by the caller).
 */
import { summarizeValue } from './value-summary.js';

const QUANTITY = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1,
  k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A quantity that cannot be used; the message is one short line whatever the input was. */
export class QuantityError extends Error {
  constructor(readonly input: unknown, reason?: string) {
    super(`invalid quantity ${summarizeValue(input)}${reason ? `: ${reason}` : ''}`);
  }
}

/**
 * Parses a quantity ("1.5", "500m", "4Gi", "1e3", 2) into base units. Negative values
 * are refused: every quantity Headroom reads (requests, limits, allocatable, capacity
 * annotations, NodePool limits) is an amount of something, and a negative one would
 * turn sums and scores upside down.
 */
export function parseQuantity(input: string | number): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new QuantityError(input);
    if (input < 0) throw new QuantityError(input, 'must not be negative');
    return input + 0;
  }
  if (typeof input !== 'string') throw new QuantityError(input);
  const m = QUANTITY.exec(input.trim());
  if (!m) throw new QuantityError(input);
  const value = Number(m[1]);
  if (value < 0) throw new QuantityError(input, 'must not be negative');
  const suffix = m[2] ?? '';
  const multiplier = suffix in SUFFIX ? SUFFIX[suffix]! : 10 ** Number(suffix.slice(1));
  // + 0 turns "-0" into 0.
  const result = value * multiplier + 0;
  if (!Number.isFinite(result)) throw new QuantityError(input);
  return result;
}

/** CPU as integer millicores, rounded up as the scheduler does ("100m" -> 100, "0.0001" -> 1). */
export function parseMilliCpu(input: string | number): number {
  return Math.ceil(parseQuantity(input) * 1000 - 1e-9);
}

/** Byte-valued and count-valued quantities as integers, rounded up. */
export function parseInteger(input: string | number): number {
  return Math.ceil(parseQuantity(input) - 1e-9);
}

const BINARY_UNITS: Array<[string, number]> = [['Ei', 2 ** 60], ['Pi', 2 ** 50], ['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]];
const DECIMAL_UNITS: Array<[string, number]> = [['E', 1e18], ['P', 1e15], ['T', 1e12], ['G', 1e9], ['M', 1e6], ['k', 1e3]];

/** Millicores as a canonical quantity: 2000 -> "2", 1500 -> "1500m". */
export function formatMilliCpu(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

/**
 * An integer quantity (bytes, counts) with the exact unit that gives the smallest
 * number, binary on ties: 1073741824 -> "1Gi", 16e9 -> "16G", 1500 -> "1500".
 * For messages and tables.
 */
export function formatInteger(value: number): string {
  if (value === 0 || !Number.isInteger(value)) return String(value);
  let best = String(value);
  let bestMantissa = Math.abs(value);
  for (const units of [BINARY_UNITS, DECIMAL_UNITS]) {
    for (const [suffix, size] of units) {
      if (Math.abs(value) < size || value % size !== 0) continue;
      if (Math.abs(value / size) < bestMantissa) {
        bestMantissa = Math.abs(value / size);
        best = `${value / size}${suffix}`;
      }
      break; // the largest exact unit of this family
    }
  }
  return best;
}
