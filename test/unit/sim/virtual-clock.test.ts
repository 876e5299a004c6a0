import { expect } from 'chai';
import { SIM_EPOCH, VirtualClock } from '../../../src/sim/virtual-clock.js';

describe('sim VirtualClock', () => {
  it('runs events in time order, ties in scheduling order, and skips cancelled ones', () => {
    const c = new VirtualClock();
    const seen: string[] = [];
    c.setTimer(500, () => seen.push(`b@${c.now() - SIM_EPOCH}`));
    c.setTimer(100, () => seen.push(`a@${c.now() - SIM_EPOCH}`));
    c.setTimer(500, () => seen.push(`c@${c.now() - SIM_EPOCH}`));
    const cancel = c.setTimer(300, () => seen.push('never'));
    cancel();
    c.setTimer(200, () => c.setTimer(0, () => seen.push(`nested@${c.now() - SIM_EPOCH}`)));
    while (c.runNext()) { /* drain */ }
    expect(seen).to.deep.equal(['a@100', 'nested@200', 'b@500', 'c@500']);
  });

  it('stops at the horizon and never goes back in time', () => {
    const c = new VirtualClock(0);
    let ran = 0;
    c.setTimer(1000, () => ran++);
    c.setTimer(5000, () => ran++);
    while (c.runNext(2000)) { /* drain */ }
    expect(ran).to.equal(1);
    expect(c.now()).to.equal(1000);
    c.at(10, () => ran++);
    expect(c.peek()).to.equal(1000);
  });
});
