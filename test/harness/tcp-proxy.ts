/**
 * A TCP proxy between a client and kube-apiserver (or any server) that a test can
 * break: `drop()` resets every open connection (a watch dropped by a load balancer
 * or a network blip), `stall()` freezes them (bytes stop flowing, sockets stay
 * open: a black-holed network or a half-dead NAT entry) until `resume()`. TLS
 * passes through untouched, so the apiserver's certificate (SAN 127.0.0.1) still
 * verifies: point a kubeconfig's server at `proxy.url`.
 *
 *   const proxy = await TcpProxy.start(new URL(cp.server));
 *   const viaProxy = proxy.kubeConfig(cp.kubeConfig());
 *   proxy.stall(); ...; proxy.resume(); proxy.drop(); await proxy.close();
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

interface Pair {
  client: Socket;
  upstream: Socket;
}

export class TcpProxy {
  private readonly pairs = new Set<Pair>();
  private stalled = false;
  private readonly frozen = new Set<Pair>();
  /** Connections accepted, and connections reset by drop(). */
  readonly stats = { accepted: 0, dropped: 0 };

  private constructor(private readonly server: Server, readonly port: number, private readonly target: { host: string; port: number }) {}

  static async start(target: URL | { host: string; port: number }): Promise<TcpProxy> {
    const t = target instanceof URL ? { host: target.hostname, port: Number(target.port || (target.protocol === 'https:' ? 443 : 80)) } : target;
    const holder: { proxy?: TcpProxy } = {};
    const server = createServer((client) => {
      if (holder.proxy) holder.proxy.accept(client);
      else client.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('proxy: no port');
    holder.proxy = new TcpProxy(server, address.port, t);
    return holder.proxy;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Open connections. */
  get connections(): number {
    return this.pairs.size;
  }

  private accept(client: Socket): void {
    this.stats.accepted++;
    const upstream = connect(this.target.port, this.target.host);
    const pair = { client, upstream };
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      this.frozen.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
    if (this.stalled) {
      this.freeze(pair);
      this.frozen.add(pair);
    }
  }

  private freeze(p: Pair): void {
    p.client.unpipe(p.upstream);
    p.upstream.unpipe(p.client);
    p.client.pause();
    p.upstream.pause();
  }

  /**
   * Stops every byte both ways on the open connections, without closing anything, and
   * on new ones too unless `openOnly` (the half-dead connection: a black-holed NAT
   * entry, while a fresh connection works; only a client's own stall detection gets
   * out of it).
   */
  stall(opts: { openOnly?: boolean } = {}): void {
    this.stalled = !opts.openOnly;
    for (const p of this.pairs) {
      this.freeze(p);
      this.frozen.add(p);
    }
  }

  /** Connections frozen by stall() and still open. */
  get frozenConnections(): number {
    return [...this.frozen].filter((p) => this.pairs.has(p)).length;
  }

  resume(): void {
    this.stalled = false;
    for (const p of this.frozen) {
      if (!this.pairs.has(p)) continue;
      p.client.pipe(p.upstream);
      p.upstream.pipe(p.client);
    }
    this.frozen.clear();
  }

  /** A copy of `kc` whose current cluster is reached through this proxy. */
  kubeConfig(kc: KubeConfig): KubeConfig {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const via = new KubeConfig();
    via.loadFromOptions({
      clusters: kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server: this.url } : c)),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
    return via;
  }

  /** Resets every open connection (RST to both ends); new ones are accepted as before. */
  drop(): number {
    const n = this.pairs.size;
    for (const p of [...this.pairs]) {
      p.client.resetAndDestroy();
      p.upstream.resetAndDestroy();
      this.pairs.delete(p);
    }
    this.stats.dropped += n;
    return n;
  }

  async close(): Promise<void> {
    this.drop();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
