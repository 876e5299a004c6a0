import { expect } from 'chai';
import { matchesLabelSelector, matchesNodeSelectorRequirement } from '../../../src/scheduling/label-selector.js';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front', 'gpu-count': '4' };

  it('a nil selector matches nothing, an empty one everything', () => {
    expect(matchesLabelSelector(undefined, labels)).to.equal(false);
    expect(matchesLabelSelector(null, labels)).to.equal(false);
    expect(matchesLabelSelector({}, labels)).to.equal(true);
    expect(matchesLabelSelector({}, {})).to.equal(true);
    expect(matchesLabelSelector({ matchLabels: {}, matchExpressions: [] }, {})).to.equal(true);
  });

  it('ANDs matchLabels and matchExpressions', () => {
    expect(matchesLabelSelector({ matchLabels: { app: 'web' } }, labels)).to.equal(true);
    expect(matchesLabelSelector({ matchLabels: { app: 'web', tier: 'back' } }, labels)).to.equal(false);
    expect(matchesLabelSelector({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] }, labels)).to.equal(false);
    expect(matchesLabelSelector({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['back', 'front'] }] }, labels)).to.equal(true);
  });

  const cases: [string, string[] | undefined, Record<string, string>, boolean][] = [
    ['In', ['web', 'api'], { app: 'web' }, true],
    ['In', ['api'], { app: 'web' }, false],
    ['In', ['web'], {}, false],
    ['NotIn', ['api'], { app: 'web' }, true],
    ['NotIn', ['web'], { app: 'web' }, false],
    ['NotIn', ['web'], {}, true],
    ['Exists', undefined, { app: '' }, true],
    ['Exists', undefined, {}, false],
    ['DoesNotExist', undefined, {}, true],
    ['DoesNotExist', undefined, { app: 'x' }, false],
    ['Bogus', ['web'], { app: 'web' }, false],
  ];
  for (const [operator, values, l, want] of cases) {
    it(`label selector ${operator} ${JSON.stringify(values)} on ${JSON.stringify(l)} -> ${want}`, () => {
      expect(matchesLabelSelector({ matchExpressions: [{ key: 'app', operator, values }] }, l)).to.equal(want);
      expect(matchesNodeSelectorRequirement({ key: 'app', operator, values }, l)).to.equal(want);
    });
  }

  const numeric: [string, string[], Record<string, string>, boolean][] = [
    ['Gt', ['3'], { n: '4' }, true],
    ['Gt', ['4'], { n: '4' }, false],
    ['Gt', ['-1'], { n: '0' }, true],
    ['Lt', ['5'], { n: '4' }, true],
    ['Lt', ['4'], { n: '4' }, false],
    ['Gt', ['3'], {}, false],
    ['Gt', ['3'], { n: 'four' }, false],
    ['Gt', ['three'], { n: '4' }, false],
    ['Gt', ['1', '2'], { n: '4' }, false],
    ['Lt', ['10'], { n: '4.5' }, false],
    ['Gt', ['9'], { n: '10' }, true], // integers, not strings: "10" > "9"
  ];
  for (const [operator, values, l, want] of numeric) {
    it(`node selector ${operator} ${JSON.stringify(values)} on ${JSON.stringify(l)} -> ${want}`, () => {
      expect(matchesNodeSelectorRequirement({ key: 'n', operator, values }, l)).to.equal(want);
    });
  }

  it('Gt/Lt are not label selector operators', () => {
    expect(matchesLabelSelector({ matchExpressions: [{ key: 'n', operator: 'Gt', values: ['1'] }] }, { n: '4' })).to.equal(false);
  });
});
