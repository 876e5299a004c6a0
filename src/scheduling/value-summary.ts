/**
 * A short, one-line rendering of a value the caller supplied, for error messages:
 * strings quoted and cut at `maxChars`, numbers and booleans as they are, anything else
 * by its type. Never serializes a structure (that would echo unbounded input back, and
 * JSON.stringify throws on deep nesting).
 */
export function summarizeValue(value: unknown, maxChars = 64): string {
  if (typeof value === 'string') {
    const cut = value.length > maxChars ? `${value.slice(0, maxChars)}...` : value;
    return JSON.stringify(cut);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
