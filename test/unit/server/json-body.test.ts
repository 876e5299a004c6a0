import { expect } from 'chai';
import fc from 'fast-check';
import { scanJson } from '../../../src/server/json-body.js';

/** Nesting depth and values (members and elements past the first, plus containers) of a parsed JSON value. */
function measure(value: unknown, level = 0): { depth: number; values: number } {
  if (value === null || typeof value !== 'object') return { depth: level, values: 0 };
  const members = Array.isArray(value) ? value : Object.values(value);
  let depth = level + 1;
  let values = 1 + Math.max(0, members.length - 1);
  for (const m of members) {
    const inner = measure(m, level + 1);
    depth = Math.max(depth, inner.depth);
    values += inner.values;
  }
  return { depth, values };
}

/** Strings that exercise the scanner's string skipping: quotes, backslashes, separators, multi-byte text, long runs. */
const tricky = fc.oneof(
  fc.string({ unit: fc.constantFrom('"', '\\', ',', '{', '[', ']', '}', 'a', 'é', '𝄞'), maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('\\', '"', 'x'), minLength: 60, maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, tricky, fc.integer(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 6 }),
  object: fc.dictionary(tricky, tie('value'), { maxKeys: 6 }),
})).value;

describe('server json-body', () => {
  it('scanJson counts depth and values as the parsed value has them, whatever the strings hold', () => {
    fc.assert(
      fc.property(json, fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 60 }), (value, maxDepth, maxValues) => {
        const text = Buffer.from(JSON.stringify(value));
        const { depth, values } = measure(value);
        expect(scanJson(text, maxDepth, Number.MAX_SAFE_INTEGER)).to.equal(depth > maxDepth ? 'depth' : undefined);
        expect(scanJson(text, Number.MAX_SAFE_INTEGER, maxValues)).to.equal(values > maxValues ? 'values' : undefined);
      }),
      { numRuns: 2000 },
    );
  });

  it('scanJson skips long strings that end in escaped quotes and backslashes', () => {
    const long = `${'\\"'.repeat(100)}${'x'.repeat(100)}\\\\`;
    const text = Buffer.from(JSON.stringify([long, [[['{']]]]));
    expect(scanJson(text, 3, 100)).to.equal('depth');
    expect(scanJson(text, 4, 100)).to.equal(undefined);
    // An unterminated string: what follows its opening quote is not counted (JSON.parse refuses the text anyway).
    expect(scanJson(Buffer.from(`["${'\\"'.repeat(50)},{,[`), 1, 1)).to.equal(undefined);
  });
});
