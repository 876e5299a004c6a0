import { expect } from 'chai';
import { matchesSelectorString } from '../../../src/scheduling/label-selector.js';

describe('label selector strings (scale subresource status.selector)', () => {
  const labels = { app: 'web', tier: 'front', track: 'stable' };
  for (const [selector, want] of [
    ['', true],
    ['app=web', true],
    ['app==web,tier=front', true],
    ['app=db', false],
    ['app!=db', true],
    ['app!=web', false],
    ['tier in (front, back)', true],
    ['tier notin (front)', false],
    ['app=web,tier in (back)', false],
    ['track', true],
    ['!track', false],
    ['!missing', true],
    ['missing', false],
    ['app=web,,', true],
    ['app =~ web', false],
  ] as const) {
    it(`${JSON.stringify(selector)} -> ${want}`, () => expect(matchesSelectorString(selector, labels)).to.equal(want));
  }
});
