import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { DISRUPTION_TAINT_KEY } from '../../src/api/disruption-taint.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { parseMilliCpu, parseQuantity } from '../../src/scheduling/quantity.js';

/**
 * The invariant every disruption test runs under: no pod whose workload was Running
 * stays Pending while capacity for it exists. A pending pod of a controller that had a
 * Running pod, pending for longer than `graceMs`, while some Ready, uncordoned node has
 * room for its requests (cpu, memory, pod count) and no NoSchedule/NoExecute taint it
 * does not tolerate, is a violation. Headroom's own disruption taint does NOT make a
 * node unavailable here: a node we withhold is still capacity (that is the point of
 * cancellation). Polls the API server; `violations` lists what it saw.
 */
export class StrandedPodWatcher {
  readonly violations: string[] = [];
  /** Owners (`Kind/name`) of which a pod has been seen Running. */
  private readonly ranOwners = new Set<string>();
  private readonly pendingSince = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private stopped = false;
  polls = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly opts: { nodeLabelSelector: string; graceMs?: number; pollMs?: number },
  ) {}

  start(): this {
    const tick = () => {
      if (this.stopped) return;
      this.polling = this.poll().catch(() => {}).finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.opts.pollMs ?? 500);
      });
    };
    tick();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling;
  }

  /** Throws with every violation seen so far. */
  assertHeld(): void {
    if (this.violations.length > 0) throw new Error(`Running-never-stranded invariant broken:\n${[...new Set(this.violations)].join('\n')}`);
  }

  private async poll(): Promise<void> {
    const [pods, nodes] = await Promise.all([
      this.client.get<{ items: V1Pod[] }>(`/api/v1/namespaces/${this.namespace}/pods`),
      this.client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: this.opts.nodeLabelSelector }),
    ]);
    this.polls++;
    const now = Date.now();
    for (const p of pods.items) if (p.status?.phase === 'Running' && owner(p)) this.ranOwners.add(owner(p)!);
    const seen = new Set<string>();
    for (const p of pods.items) {
      const key = p.metadata?.uid ?? '';
      if (p.spec?.nodeName || p.status?.phase !== 'Pending' || p.metadata?.deletionTimestamp) continue;
      const o = owner(p);
      if (!o || !this.ranOwners.has(o)) continue;
      seen.add(key);
      const since = this.pendingSince.get(key) ?? now;
      this.pendingSince.set(key, since);
      if (now - since < (this.opts.graceMs ?? 15_000)) continue;
      const room = nodes.items.find((n) => fits(p, n, pods.items));
      if (room) this.violations.push(`pod ${this.namespace}/${p.metadata?.name} (${o}) Pending ${Math.round((now - since) / 1000)} s while node ${room.metadata?.name} had room`);
    }
    for (const k of [...this.pendingSince.keys()]) if (!seen.has(k)) this.pendingSince.delete(k);
  }
}

function owner(p: V1Pod): string | undefined {
  const o = p.metadata?.ownerReferences?.find((x) => x.controller);
  return o ? `${o.kind}/${o.name}` : undefined;
}

function requests(p: V1Pod): { cpu: number; memory: number } {
  let cpu = 0;
  let memory = 0;
  for (const c of p.spec?.containers ?? []) {
    cpu += parseMilliCpu(c.resources?.requests?.cpu ?? '0');
    memory += parseQuantity(c.resources?.requests?.memory ?? '0');
  }
  return { cpu, memory };
}

/** Whether `pod` would fit on `node` now, ignoring Headroom's own disruption taint. */
function fits(pod: V1Pod, node: V1Node, pods: readonly V1Pod[]): boolean {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  if (!ready || node.spec?.unschedulable || node.metadata?.deletionTimestamp) return false;
  const tolerated = (key: string) => (pod.spec?.tolerations ?? []).some((t) => t.operator === 'Exists' && (!t.key || t.key === key));
  for (const t of node.spec?.taints ?? []) {
    if (t.key === DISRUPTION_TAINT_KEY || t.effect === 'PreferNoSchedule') continue;
    if (!tolerated(t.key)) return false;
  }
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (node.metadata?.labels?.[k] !== v) return false;
  const alloc = node.status?.allocatable ?? {};
  const bound = pods.filter((x) => x.spec?.nodeName === node.metadata?.name && !['Succeeded', 'Failed'].includes(x.status?.phase ?? ''));
  const used = bound.reduce((a, x) => {
    const r = requests(x);
    return { cpu: a.cpu + r.cpu, memory: a.memory + r.memory };
  }, { cpu: 0, memory: 0 });
  const want = requests(pod);
  return used.cpu + want.cpu <= parseMilliCpu(alloc.cpu ?? '0')
    && used.memory + want.memory <= parseQuantity(alloc.memory ?? '0')
    && bound.length + 1 <= Number(alloc.pods ?? '110');
}

export interface InvariantGuard {
  /**
   * Starts watching `namespace` (pods) and the nodes matching `nodeLabelSelector` for
   * the rest of the current test; the test's afterEach stops the watcher and fails the
   * test if a pod was stranded, or if it never managed to look.
   */
  watch(namespace: string, nodeLabelSelector: string, opts?: { graceMs?: number; pollMs?: number }): StrandedPodWatcher;
}

/**
 * Puts every test of the enclosing `describe` under the Running-never-stranded
 * invariant with one `watch` call per test. Call it inside the describe block (it
 * registers an afterEach); `client` is read when a test calls `watch`.
 */
export function strandedPodInvariant(client: () => KubeClient): InvariantGuard {
  let watching: StrandedPodWatcher[] = [];
  afterEach(async function () {
    const all = watching;
    watching = [];
    await Promise.all(all.map((w) => w.stop()));
    // A test that failed already says why; the invariant is judged on those that passed.
    if (this.currentTest?.state !== 'passed') return;
    for (const w of all) {
      w.assertHeld();
      if (w.polls === 0) throw new Error('the Running-never-stranded invariant never managed to read the cluster');
    }
  });
  return {
    watch(namespace, nodeLabelSelector, opts = {}) {
      const w = new StrandedPodWatcher(client(), namespace, { nodeLabelSelector, ...opts }).start();
      watching.push(w);
      return w;
    },
  };
}
