import { expect } from 'chai';
import { createHandler } from '../../../src/server/app.js';
import { listen, type RunningServer } from '../../../src/server/listen.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the profiles' JSON shapes
type Json = any;

describe('profiling endpoints (node:inspector, metrics port)', function () {
  // A heap snapshot of the whole test process (every unit test module loaded) takes tens of
  // seconds on a loaded 2-core machine.
  this.timeout(180_000);
  let on: RunningServer;
  let off: RunningServer;

  before(async () => {
    on = await listen(createHandler({ ready: () => true, routes: [], profiling: true }), { host: '127.0.0.1', port: 0, tls: false });
    off = await listen(createHandler({ ready: () => true, routes: [] }), { host: '127.0.0.1', port: 0, tls: false });
  });
  after(async () => {
    await on.close();
    await off.close();
  });

  it('are off by default: 404 with a JSON message', async () => {
    for (const path of ['/debug/profile/cpu?seconds=1', '/debug/profile/heap']) {
      const res = await fetch(`${off.url}${path}`);
      expect(res.status, path).to.equal(404);
      expect((await res.json() as Json).message).to.be.a('string');
    }
  });

  it('cpu: a loadable .cpuprofile of the main thread over the given seconds', async () => {
    const started = Date.now();
    const res = await fetch(`${on.url}/debug/profile/cpu?seconds=1`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-disposition')).to.match(/\.cpuprofile"$/);
    const profile = await res.json() as Json;
    // The shape DevTools reads: a call tree, samples and their time deltas.
    expect(profile.nodes).to.be.an('array').that.is.not.empty;
    expect(profile.nodes[0]).to.include.keys('id', 'callFrame');
    expect(profile.samples).to.be.an('array');
    expect(profile.timeDeltas).to.have.length(profile.samples.length);
    expect(profile.endTime - profile.startTime).to.be.at.least(900_000); // microseconds
    expect(Date.now() - started).to.be.at.least(900);
  });

  it('heap: a loadable .heapsnapshot', async () => {
    const res = await fetch(`${on.url}/debug/profile/heap`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-disposition')).to.match(/\.heapsnapshot"$/);
    const snap = await res.json() as Json;
    expect(snap.snapshot.meta.node_fields).to.include('name');
    expect(snap.snapshot.node_count).to.be.greaterThan(1000);
    expect(snap.nodes).to.have.length(snap.snapshot.node_count * snap.snapshot.meta.node_fields.length);
  });

  it('refuses a bad duration with 400 and one profile at a time with 409', async () => {
    for (const s of ['0', '-1', 'abc', '121', '1.5']) {
      const res = await fetch(`${on.url}/debug/profile/cpu?seconds=${s}`);
      expect(res.status, s).to.equal(400);
      expect((await res.json() as Json).message).to.match(/^seconds must be/);
    }
    const first = fetch(`${on.url}/debug/profile/cpu?seconds=1`);
    await new Promise((r) => setTimeout(r, 200));
    const second = await fetch(`${on.url}/debug/profile/heap`);
    expect(second.status).to.equal(409);
    expect((await (await first).json() as Json).samples).to.be.an('array');
  });
});
