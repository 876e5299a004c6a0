import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { withDisruptionTaint, withoutDisruptionTaint, hasDisruptionTaint } from '../api/disruption-taint.js';
import type { DisruptionNodePort, EvictionResult, FreshNode, PodRef } from '../disruption/orchestration/node-port.js';
import { isConflict, isNotFound, KubeApiError, type KubeClient } from '../kube/kube-client.js';
import type { Log } from '../api/log.js';

/**
 * The Disruptor's node port on the workload cluster's API server: taints with an
 * optimistic-concurrency merge patch (the node's resourceVersion travels with it, so a
 * concurrent change to the taint list is retried, never overwritten), and fresh reads
 * straight from the API server (a quorum read, not the informer cache), and
 * evictions through the Eviction API. Needs `nodes patch` and `pods/eviction create`
 * (the chart grants both with disruption on) and the pods list it has anyway.
 */
export class KubeDisruptionNodes implements DisruptionNodePort {
  constructor(
    private readonly client: KubeClient,
    private readonly opts: { dryRun?: boolean; log?: Log } = {},
  ) {}

  taintNode(name: string): Promise<void> {
    return this.update(name, true);
  }

  untaintNode(name: string): Promise<void> {
    return this.update(name, false);
  }

  async readNode(name: string): Promise<FreshNode | undefined> {
    let node: V1Node;
    try {
      node = await this.client.get<V1Node>(`/api/v1/nodes/${encodeURIComponent(name)}`);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const pods = await this.client.get<{ items: V1Pod[] }>('/api/v1/pods', { fieldSelector: `spec.nodeName=${name}` });
    return { node, pods: pods.items };
  }

  async evictPod(pod: PodRef): Promise<EvictionResult> {
    if (this.opts.dryRun) {
      this.opts.log?.(`dry run: would evict pod ${pod.namespace}/${pod.name}`, { kind: 'Pod', namespace: pod.namespace, name: pod.name });
      return { kind: 'gone' };
    }
    try {
      // No client-side retry of a 429: the drain backs off per pod (a PDB refusal is not APF).
      await this.client.request('POST', `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}/eviction`, {
        maxRetries: 0,
        body: {
          apiVersion: 'policy/v1', kind: 'Eviction', metadata: { namespace: pod.namespace, name: pod.name },
          ...(pod.uid ? { deleteOptions: { preconditions: { uid: pod.uid } } } : {}),
        },
      });
      return { kind: 'evicted' };
    } catch (err) {
      // 404: gone; 409: the uid precondition failed, so that pod is gone (a new one has its name).
      if (isNotFound(err) || isConflict(err)) return { kind: 'gone' };
      if (err instanceof KubeApiError && err.status === 429) {
        return { kind: 'refused', why: err.message, ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}) };
      }
      throw err;
    }
  }

  private async update(name: string, taint: boolean, retries = 5): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let node: V1Node;
      try {
        node = await this.client.get<V1Node>(`/api/v1/nodes/${encodeURIComponent(name)}`);
      } catch (err) {
        if (!taint && isNotFound(err)) return;
        throw err;
      }
      if (hasDisruptionTaint(node.spec?.taints) === taint) return;
      if (this.opts.dryRun) {
        this.opts.log?.(`dry run: would ${taint ? 'taint' : 'untaint'} node ${name}`, { kind: 'Node', name });
        return;
      }
      const taints = taint ? withDisruptionTaint(node.spec?.taints) : withoutDisruptionTaint(node.spec?.taints);
      try {
        await this.client.request('PATCH', `/api/v1/nodes/${encodeURIComponent(name)}`, {
          contentType: 'application/merge-patch+json',
          body: { metadata: { resourceVersion: node.metadata?.resourceVersion }, spec: { taints } },
        });
        return;
      } catch (err) {
        if (isConflict(err) && attempt < retries) continue;
        if (!taint && isNotFound(err)) return;
        throw err;
      }
    }
  }
}
