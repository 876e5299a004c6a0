import { expect } from 'chai';
import { withDrainTimeout } from '../../../src/controller/controller.js';

describe('--drain-timeout reaches the Disruptor (issue 25, item 6)', () => {
  it('sets the drain timeout, keeps the other options, and leaves a drain that is off off', () => {
    expect(withDrainTimeout({ maxExpiredPerPass: 2 }, 1_200_000)).to.deep.equal({ maxExpiredPerPass: 2, drain: { timeoutMs: 1_200_000 } });
    expect(withDrainTimeout({ drain: { pollMs: 50 } }, 90_000)).to.deep.equal({ drain: { timeoutMs: 90_000, pollMs: 50 } });
    expect(withDrainTimeout({ drain: false }, 90_000)).to.deep.equal({ drain: false });
    expect(withDrainTimeout({}, undefined)).to.deep.equal({});
  });
});
