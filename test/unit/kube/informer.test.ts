import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { Informer } from '../../../src/kube/informer.js';
import { KubeClient } from '../../../src/kube/kube-client.js';

/**
 * The informer's failure handling against a scripted fake apiserver: the real
 * apiserver cannot be made to stall a watch or expire a resourceVersion on cue.
 * (The happy path runs against the real apiserver in the integration tests.)
 */
type WatchScript = (res: http.ServerResponse, query: URLSearchParams) => void;

function pod(name: string, rv: string) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', resourceVersion: rv, managedFields: [{}] } };
}

/**
 * What a server without the WatchList feature answers to sendInitialEvents (its
 * validation refuses the parameter); true when it answered. The fakes here serve
 * paged lists and plain watches, so every informer falls back to those first.
 */
function refusesWatchList(url: URL, res: http.ServerResponse): boolean {
  if (url.searchParams.get('sendInitialEvents') !== 'true') return false;
  res.writeHead(422, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', code: 422, reason: 'Invalid', message: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled' }));
  return true;
}

async function fakeApiserver(list: () => { rv: string; items: unknown[] }, watches: WatchScript[]) {
  const seen = { lists: 0, watches: [] as string[] };
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (refusesWatchList(url, res)) return;
    if (url.searchParams.get('watch') === 'true') {
      seen.watches.push(url.searchParams.get('resourceVersion') ?? '');
      const script = watches.shift();
      if (!script) return; // hang forever (until aborted)
      open.add(res);
      res.on('close', () => open.delete(res));
      return script(res, url.searchParams);
    }
    seen.lists++;
    const { rv, items } = list();
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: rv }, items }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    client: new KubeClient(kubeConfigFor(server)), seen,
    close: () => {
      for (const r of open) r.destroy();
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A kubeconfig for a plain-HTTP test server on loopback. */
function kubeConfigFor(server: http.Server): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x',
  });
  return kc;
}

function event(res: http.ServerResponse, type: string, object: unknown) {
  res.write(`${JSON.stringify({ type, object })}\n`);
}

async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Informer (list + watch robustness)', () => {
  let api: Awaited<ReturnType<typeof fakeApiserver>>;
  let inf: Informer | undefined;
  afterEach(async () => {
    inf?.stop();
    await api?.close();
  });

  it('lists, applies watch events and bookmarks, and strips managedFields', async () => {
    api = await fakeApiserver(() => ({ rv: '10', items: [pod('a', '9')] }), [(res) => {
      res.writeHead(200);
      event(res, 'ADDED', pod('b', '11'));
      event(res, 'MODIFIED', pod('a', '12'));
      event(res, 'DELETED', pod('b', '13'));
      event(res, 'BOOKMARK', { kind: 'Pod', metadata: { resourceVersion: '20' } });
    }]);
    inf = new Informer(api.client, { group: '', version: 'v1', plural: 'pods' });
    inf.start();
    await inf.waitForSync();
    await until(() => inf!.stats.events === 3);
    expect(inf.list().map((p) => p.metadata?.name)).to.deep.equal(['a']);
    expect(inf.list()[0]!.metadata?.resourceVersion).to.equal('12');
    expect(inf.list()[0]!.metadata?.managedFields).to.equal(undefined);
    expect(api.seen.watches[0]).to.equal('10');
  });

  it('aborts a stalled watch and resumes from the last resourceVersion', async () => {
    api = await fakeApiserver(() => ({ rv: '10', items: [] }), [
      (res) => {
        res.writeHead(200);
        event(res, 'ADDED', pod('a', '15'));
        // ...then silence: no events, no bookmarks, connection open.
      },
      (res) => {
        res.writeHead(200);
        event(res, 'ADDED', pod('b', '16'));
      },
    ]);
    inf = new Informer(api.client, { group: '', version: 'v1', plural: 'pods' }, { stallTimeoutMs: 200, minBackoffMs: 10 });
    inf.start();
    await until(() => inf!.list().length === 2);
    expect(inf.stats.stalls).to.be.at.least(1);
    expect(api.seen.watches.slice(0, 2)).to.deep.equal(['10', '15']);
    expect(api.seen.lists).to.equal(1);
  });

  it('a watch refused with 429 (API Priority and Fairness) waits out its Retry-After before watching again (issue 17)', async () => {
    const at: number[] = [];
    const refuse = (res: http.ServerResponse) => {
      at.push(Date.now());
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '1' });
      res.end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'too many requests' }));
    };
    api = await fakeApiserver(() => ({ rv: '10', items: [] }), [refuse, (res) => {
      at.push(Date.now());
      res.writeHead(200);
      event(res, 'ADDED', pod('a', '11'));
    }]);
    // minBackoff 10 ms: without Retry-After the second watch would come ~10 ms later.
    inf = new Informer(api.client, { group: '', version: 'v1', plural: 'pods' }, { minBackoffMs: 10 });
    inf.start();
    await until(() => inf!.list().length === 1, 5000);
    expect(at).to.have.length(2);
    expect(at[1]! - at[0]!).to.be.at.least(950);
  });

  it('relists on a 410 Gone ERROR event', async () => {
    let listed = 0;
    api = await fakeApiserver(() => {
      listed++;
      return listed === 1 ? { rv: '10', items: [pod('a', '5')] } : { rv: '30', items: [pod('c', '29')] };
    }, [
      (res) => {
        res.writeHead(200);
        event(res, 'ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
      },
      (res) => res.writeHead(200),
    ]);
    inf = new Informer(api.client, { group: '', version: 'v1', plural: 'pods' }, { minBackoffMs: 10 });
    inf.start();
    await until(() => inf!.stats.relists === 1);
    expect(inf.list().map((p) => p.metadata?.name)).to.deep.equal(['c']);
    await until(() => api.seen.watches.length >= 2);
    expect(api.seen.watches[1]).to.equal('30');
  });

  it('relists on an HTTP 410 and retries with backoff on server errors', async () => {
    api = await fakeApiserver(() => ({ rv: '10', items: [] }), [
      (res) => {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' }));
      },
      (res) => {
        res.writeHead(410, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Gone', message: 'gone' }));
      },
      (res) => res.writeHead(200),
    ]);
    const errors: unknown[] = [];
    inf = new Informer(api.client, { group: '', version: 'v1', plural: 'pods' }, { minBackoffMs: 10, onError: (e) => errors.push(e) });
    inf.start();
    await until(() => api.seen.watches.length >= 3);
    expect(api.seen.lists).to.equal(2);
    expect(errors.map((e) => (e as Error).message).join('\n')).to.match(/500[\s\S]*gone/i);
  });

  it('when a paged list\'s continue token expires (410), lists everything again unpaged instead of paging forever (issue 17)', async () => {
    // Every continued page is refused, as when etcd compacts faster than a large list is
    // paged: paging again from the start would never finish.
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (refusesWatchList(url, res)) return;
      const q = url.searchParams;
      if (q.get('watch') === 'true') return void res.writeHead(200);
      requests.push(`limit=${q.get('limit') ?? ''} continue=${q.get('continue') ?? ''}`);
      res.writeHead(q.get('continue') ? 410 : 200, { 'Content-Type': 'application/json' });
      if (q.get('continue')) return void res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'The provided continue parameter is too old' }));
      const all = [pod('a', '1'), pod('b', '2'), pod('c', '3')];
      res.end(JSON.stringify(q.get('limit')
        ? { kind: 'PodList', metadata: { resourceVersion: '9', continue: 'tok' }, items: all.slice(0, Number(q.get('limit'))) }
        : { kind: 'PodList', metadata: { resourceVersion: '9' }, items: all }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    api = { client: new KubeClient(kubeConfigFor(server)), seen: { lists: 0, watches: [] }, close: () => { server.closeAllConnections(); return new Promise<void>((r) => server.close(() => r())); } };
    inf = new Informer(api.client, { group: '', version: 'v1', plural: 'pods' }, { minBackoffMs: 10, pageSize: 2 });
    inf.start();
    await until(() => inf!.hasSynced());
    expect(inf.list().map((p) => p.metadata?.name).sort()).to.deep.equal(['a', 'b', 'c']);
    expect(requests).to.deep.equal(['limit=2 continue=', 'limit=2 continue=tok', 'limit= continue=']);
    expect(inf.stats.expiredContinues).to.equal(1);
  });

  it('keeps only objects the filter accepts, dropping ones that stop matching', async () => {
    const labelled = (name: string, rv: string, keep: boolean) => ({ ...pod(name, rv), metadata: { ...pod(name, rv).metadata, labels: { keep: String(keep) } } });
    api = await fakeApiserver(() => ({ rv: '1', items: [labelled('a', '1', true), labelled('b', '1', false)] }), [(res) => {
      res.writeHead(200);
      res.flushHeaders();
      setTimeout(() => event(res, 'MODIFIED', labelled('a', '2', false)), 300);
    }]);
    inf = new Informer(api.client, { group: '', version: 'v1', plural: 'pods' }, { filter: (o) => o.metadata?.labels?.keep === 'true' });
    inf.start();
    await inf.waitForSync();
    expect(inf.list().map((p) => p.metadata?.name)).to.deep.equal(['a']);
    await until(() => inf!.list().length === 0);
  });
});

describe('KubeClient', () => {
  it('gives up on a request the server never answers', async () => {
    const server = http.createServer(() => { /* never answers */ });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new KubeClient(kubeConfigFor(server));
    const started = Date.now();
    const err = await client.request('GET', '/api/v1/pods', { timeoutMs: 200 }).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    expect(Date.now() - started).to.be.below(5000);
    client.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
});

describe('Informer freshness', () => {
  it('counts an accepted watch as fresh, and a stall that cannot reconnect as stale', async () => {
    let accept = true;
    const server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (refusesWatchList(url, res)) return;
      if (url.searchParams.get('watch') === 'true') {
        if (!accept) return req.socket.destroy();
        res.writeHead(200);
        res.flushHeaders();
        return; // quiet: no events, no bookmarks
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '5' }, items: [] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new KubeClient(kubeConfigFor(server));
    const inf = new Informer(client, { group: '', version: 'v1', plural: 'pods' }, { stallTimeoutMs: 150, minBackoffMs: 20, maxBackoffMs: 40 });
    try {
      inf.start();
      await inf.waitForSync();
      await until(() => inf.stats.stalls >= 2);
      // Quiet but reachable: every re-watch is accepted, so the cache stays fresh.
      expect(Date.now() - inf.lastFreshAt).to.be.below(400);
      accept = false;
      const lastFresh = inf.lastFreshAt;
      await new Promise((r) => setTimeout(r, 500));
      expect(inf.lastFreshAt).to.equal(lastFresh);
      expect(inf.stats.errors).to.be.at.least(2);
    } finally {
      inf.stop();
      client.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('Informer (watch-list: lists by streaming, ADR 0121)', () => {
  const endBookmark = (rv: string) => ({ kind: 'Pod', metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } } });
  /**
   * A server with the WatchList feature: each sendInitialEvents watch runs the next
   * script (which streams the objects and the end bookmark); records every request.
   */
  async function watchListServer(streams: WatchScript[], list?: () => { rv: string; items: unknown[] }) {
    const requests: URLSearchParams[] = [];
    const open = new Set<http.ServerResponse>();
    const server = http.createServer((req, res) => {
      const q = new URL(req.url!, 'http://x').searchParams;
      requests.push(q);
      if (q.get('watch') !== 'true') {
        const { rv, items } = list?.() ?? { rv: '1', items: [] };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        return void res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: rv }, items }));
      }
      const script = streams.shift();
      if (!script) return; // hang until aborted
      open.add(res);
      res.on('close', () => open.delete(res));
      script(res, q);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new KubeClient(kubeConfigFor(server));
    return {
      client, requests,
      lists: () => requests.filter((q) => q.get('watch') !== 'true').length,
      close: () => {
        for (const r of open) r.destroy();
        client.close();
        server.closeAllConnections();
        return new Promise<void>((r) => server.close(() => r()));
      },
    };
  }
  let server: Awaited<ReturnType<typeof watchListServer>> | undefined;
  let inf: Informer | undefined;
  afterEach(async () => {
    inf?.stop();
    await server?.close();
  });

  it('syncs from one watch-list stream without a LIST: synced only at the initial-events-end bookmark, then the same stream carries changes', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    server = await watchListServer([(res) => {
      res.writeHead(200);
      event(res, 'ADDED', pod('a', '3'));
      event(res, 'ADDED', pod('b', '4'));
      void released.then(() => {
        event(res, 'BOOKMARK', endBookmark('7'));
        event(res, 'MODIFIED', pod('a', '8'));
      });
    }]);
    inf = new Informer(server.client, { group: '', version: 'v1', plural: 'pods' });
    inf.start();
    await until(() => server!.requests.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    // Objects streamed, no end bookmark yet: not synced, nothing in the cache, not fresh.
    expect(inf.hasSynced()).to.equal(false);
    expect(inf.list()).to.have.length(0);
    expect(inf.lastFreshAt).to.equal(0);
    release();
    await inf.waitForSync();
    await until(() => inf!.list().find((p) => p.metadata?.name === 'a')?.metadata?.resourceVersion === '8');
    expect(inf.list().map((p) => p.metadata?.name).sort()).to.deep.equal(['a', 'b']);
    expect(inf.list()[0]!.metadata?.managedFields).to.equal(undefined);
    const q = server.requests[0]!;
    expect([q.get('watch'), q.get('sendInitialEvents'), q.get('resourceVersionMatch'), q.get('allowWatchBookmarks'), q.get('resourceVersion')]).to.deep.equal(['true', 'true', 'NotOlderThan', 'true', null]);
    expect(server.lists()).to.equal(0);
    expect(inf.stats).to.include({ lists: 1, streamedLists: 1, relists: 0, watchListFallbacks: 0 });
  });

  it('relists after a 410 by a new watch-list stream, never a LIST, and keeps the objects whose resourceVersion did not change (issue 17)', async () => {
    // The forced-410 relist of the scale benchmark listed 50,000 pods in one unpaged
    // response next to the old cache; a stream holds only the new cache, and shares it.
    let expire: (() => void) | undefined;
    server = await watchListServer([
      (res) => {
        res.writeHead(200);
        event(res, 'ADDED', pod('a', '1'));
        event(res, 'ADDED', pod('b', '2'));
        event(res, 'BOOKMARK', endBookmark('5'));
        expire = () => event(res, 'ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
      },
      (res) => {
        res.writeHead(200);
        event(res, 'ADDED', pod('a', '1'));
        event(res, 'ADDED', pod('c', '7'));
        event(res, 'BOOKMARK', endBookmark('9'));
      },
    ]);
    inf = new Informer(server.client, { group: '', version: 'v1', plural: 'pods' }, { minBackoffMs: 10 });
    inf.start();
    await inf.waitForSync();
    const aBefore = inf.get('default', 'a');
    await until(() => expire !== undefined);
    expire!();
    await until(() => inf!.stats.relists === 1);
    expect(inf.list().map((p) => p.metadata?.name).sort()).to.deep.equal(['a', 'c']);
    expect(inf.get('default', 'a')).to.equal(aBefore);
    expect(server.lists()).to.equal(0);
    expect(server.requests.every((q) => q.get('sendInitialEvents') === 'true')).to.equal(true);
    expect(inf.stats.streamedLists).to.equal(2);
  });

  it('falls back to paged lists for good when the server refuses sendInitialEvents (422), and a paged relist keeps unchanged objects too', async () => {
    let listed = 0;
    let expire: (() => void) | undefined;
    const requests: string[] = [];
    const server2 = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      requests.push(url.searchParams.get('sendInitialEvents') ? 'watch-list' : url.searchParams.get('watch') ? 'watch' : 'list');
      if (refusesWatchList(url, res)) return;
      if (url.searchParams.get('watch') === 'true') {
        res.writeHead(200);
        if (listed === 1) expire = () => event(res, 'ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
        return;
      }
      listed++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: String(10 * listed) }, items: listed === 1 ? [pod('a', '1'), pod('b', '2')] : [pod('a', '1'), pod('b', '12')] }));
    });
    await new Promise<void>((r) => server2.listen(0, '127.0.0.1', r));
    const client = new KubeClient(kubeConfigFor(server2));
    const errors: string[] = [];
    const informer = new Informer(client, { group: '', version: 'v1', plural: 'pods' }, { minBackoffMs: 10, onError: (e) => errors.push(String(e)) });
    try {
      informer.start();
      await informer.waitForSync();
      const [aBefore, bBefore] = [informer.get('default', 'a'), informer.get('default', 'b')];
      await until(() => expire !== undefined);
      expire!();
      await until(() => informer.stats.relists === 1);
      // The watch after the relist may reach the server a moment after the relist is counted.
      await until(() => requests.length >= 5);
      expect(requests.slice(0, 5)).to.deep.equal(['watch-list', 'list', 'watch', 'list', 'watch']);
      expect(informer.get('default', 'a')).to.equal(aBefore);
      expect(informer.get('default', 'b')).to.not.equal(bBefore);
      expect(informer.get('default', 'b')!.metadata?.resourceVersion).to.equal('12');
      expect(informer.stats).to.include({ watchListFallbacks: 1, streamedLists: 0 });
      expect(errors[0]).to.match(/refused a watch-list \(422/);
    } finally {
      informer.stop();
      client.close();
      server2.closeAllConnections();
      await new Promise<void>((r) => server2.close(() => r()));
    }
  });

  it('falls back to a paged list when the server ignores sendInitialEvents (a plain bookmark, no end bookmark)', async () => {
    server = await watchListServer([
      (res) => {
        // An old server: synthetic ADDED events, then an ordinary bookmark.
        res.writeHead(200);
        event(res, 'ADDED', pod('a', '1'));
        event(res, 'BOOKMARK', { kind: 'Pod', metadata: { resourceVersion: '3' } });
      },
      (res) => res.writeHead(200),
    ], () => ({ rv: '3', items: [pod('a', '1'), pod('b', '2')] }));
    inf = new Informer(server.client, { group: '', version: 'v1', plural: 'pods' }, { minBackoffMs: 10 });
    inf.start();
    await inf.waitForSync();
    expect(inf.list().map((p) => p.metadata?.name).sort()).to.deep.equal(['a', 'b']);
    expect(server.lists()).to.equal(1);
    expect(inf.stats).to.include({ watchListFallbacks: 1, streamedLists: 0, lists: 1 });
    await until(() => server!.requests.length === 3);
    expect(server.requests[2]!.get('resourceVersion')).to.equal('3');
    expect(server.requests[2]!.get('sendInitialEvents')).to.equal(null);
  });
});
