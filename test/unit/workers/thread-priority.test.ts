import { expect } from 'chai';
import { LOW_NICE, type ThreadSystem, lowerThreadPriority } from '../../../workers/thread-priority.js';

/** A recording stand-in for the system calls (the real ones are exercised through SolverPool). */
function fakeSystem(o: { reniceFails?: boolean; chrtFails?: NodeJS.ErrnoException } = {}): ThreadSystem & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    renice(nice) {
      calls.push(`renice ${nice}`);
      if (o.reniceFails) throw new Error('EACCES: permission denied');
    },
    run(file, args) {
      calls.push(`${file} ${args.join(' ')}`);
      if (o.chrtFails) throw o.chrtFails;
    },
    threadId: () => '4242',
  };
}

describe('solver thread priority', () => {
  it('idle: nice 10 first, then SCHED_IDLE on this thread through chrt', () => {
    const sys = fakeSystem();
    expect(lowerThreadPriority('idle', sys)).to.deep.equal({ priority: 'idle' });
    expect(sys.calls).to.deep.equal([`renice ${LOW_NICE}`, 'chrt --idle -p 0 4242']);
  });

  it('idle without chrt: stays at nice 10 and says why in one line', () => {
    const missing = Object.assign(new Error('spawnSync chrt ENOENT'), { code: 'ENOENT' });
    const r = lowerThreadPriority('idle', fakeSystem({ chrtFails: missing }));
    expect(r.priority).to.equal('low');
    expect(r.warning).to.equal(`SCHED_IDLE unavailable for the solver thread (ENOENT); running at nice ${LOW_NICE}`);
  });

  it('low: nice 10 only; normal: nothing at all', () => {
    const low = fakeSystem();
    expect(lowerThreadPriority('low', low)).to.deep.equal({ priority: 'low' });
    expect(low.calls).to.deep.equal([`renice ${LOW_NICE}`]);
    const normal = fakeSystem();
    expect(lowerThreadPriority('normal', normal)).to.deep.equal({ priority: 'normal' });
    expect(normal.calls).to.deep.equal([]);
  });

  it('a refused renice leaves the thread as it was, with a warning', () => {
    const sys = fakeSystem({ reniceFails: true });
    const r = lowerThreadPriority('idle', sys);
    expect(r.priority).to.equal('normal');
    expect(r.warning).to.match(/cannot lower the solver thread's priority: EACCES/);
    expect(sys.calls).to.deep.equal([`renice ${LOW_NICE}`]);
  });
});
