import { expect } from 'chai';
import { parseExtenderArgs } from '../../../src/extender/args.js';

/** An object that records every time its keys are enumerated. */
function watched(target: Record<string, unknown>): { obj: Record<string, unknown>; enumerations: () => number } {
  let enumerations = 0;
  const obj = new Proxy(target, {
    ownKeys(t) {
      enumerations++;
      return Reflect.ownKeys(t);
    },
  });
  return { obj, enumerations: () => enumerations };
}

describe('ExtenderArgs parsing', () => {
  it('finds its fields without scanning the caller\'s keys (issue 10 defect 4: no O(all keys) work)', () => {
    const pad: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i++) pad[`K${i}`] = i;
    for (const body of [{ ...pad, pod: {}, nodenames: ['a'] }, { ...pad, Pod: {}, NodeNames: ['a'] }, { ...pad, pod: {} }]) {
      const { obj, enumerations } = watched(body);
      try {
        parseExtenderArgs(obj);
      } catch {
        // the third body has no candidates: a 400, still without a scan
      }
      expect(enumerations()).to.equal(0);
    }
  });

  it('accepts the Go field names, lowercase and lowerCamel', () => {
    expect(parseExtenderArgs({ Pod: {}, NodeNames: ['a'] }).candidates).to.deep.equal({ mode: 'names', names: ['a'] });
    expect(parseExtenderArgs({ pod: {}, nodenames: ['a'] }).candidates).to.deep.equal({ mode: 'names', names: ['a'] });
    expect(parseExtenderArgs({ pod: {}, nodeNames: ['a'] }).candidates).to.deep.equal({ mode: 'names', names: ['a'] });
  });

  it('does not take fields from the prototype chain (__proto__, constructor keys)', () => {
    const body = JSON.parse('{"__proto__":{"Pod":{},"NodeNames":["x"]},"constructor":{"Pod":{}}}') as unknown;
    expect(() => parseExtenderArgs(body)).to.throw(/ExtenderArgs.Pod is required/);
  });
});
