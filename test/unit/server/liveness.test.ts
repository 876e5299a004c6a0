import { expect } from 'chai';
import { createHandler } from '../../../src/server/app.js';
import { listen, type RunningServer } from '../../../src/server/listen.js';

describe('/healthz liveness', () => {
  let server: RunningServer;
  let live = true;
  const errors: string[] = [];
  before(async () => {
    server = await listen(createHandler({ ready: () => true, live: () => live, routes: [], logError: (m) => errors.push(m) }), { host: '127.0.0.1', port: 0, tls: false });
  });
  after(() => server.close());

  it('answers 503 while live() is false (a stuck provisioning cycle), 200 again after', async () => {
    live = false;
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).to.equal(503);
    expect(await res.json()).to.deep.equal({ status: 'stalled' });
    live = true;
    expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);
  });
});
