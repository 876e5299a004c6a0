import type { ScalableRef } from '../api/capacity-buffer.js';
import type { KubeClient } from './kube-client.js';
import { KubeApiError } from './kube-client.js';
import type { ObservedScale } from '../cluster/objects.js';

/**
 * Reads the scale subresource of the objects CapacityBuffers' scalableRefs name when
 * they are not kinds Headroom watches (Deployments, StatefulSets, ReplicaSets, Jobs):
 * discovery finds the kind's resource and whether it has `/scale`, then one GET per
 * object. Every failure becomes the ObservedScale's one-line `error`, so one bad
 * reference never stops the others. Discovery answers are cached per group/kind.
 */

interface ApiResource { name: string; kind: string; namespaced?: boolean }
interface Scale { spec?: { replicas?: number }; status?: { replicas?: number; selector?: string } }

export class ScaleReader {
  private readonly resources = new Map<string, { path?: string; error?: string }>();

  constructor(private readonly client: KubeClient) {}

  private async resourceOf(apiGroup: string, kind: string): Promise<{ path?: string; error?: string }> {
    const cacheKey = `${apiGroup}/${kind}`;
    const hit = this.resources.get(cacheKey);
    if (hit) return hit;
    const what = `${kind}${apiGroup ? `.${apiGroup}` : ''}`;
    let result: { path?: string; error?: string };
    try {
      let base: string;
      if (apiGroup === '') base = '/api/v1';
      else {
        const g = await this.client.get<{ preferredVersion?: { version: string } }>(`/apis/${apiGroup}`);
        base = `/apis/${apiGroup}/${g.preferredVersion?.version ?? ''}`;
      }
      const list = await this.client.get<{ resources?: ApiResource[] }>(base);
      const res = (list.resources ?? []).find((r) => r.kind === kind && !r.name.includes('/'));
      if (!res) result = { error: `kind ${what} is not served by the apiserver` };
      else if (!(list.resources ?? []).some((r) => r.name === `${res.name}/scale`)) result = { error: `${what} has no scale subresource` };
      else if (res.namespaced === false) result = { error: `${what} is cluster-scoped; a scalableRef names an object in the buffer's namespace` };
      else result = { path: `${base}/namespaces/{ns}/${res.name}/{name}/scale` };
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) result = { error: `API group ${apiGroup} is not served by the apiserver` };
      else return { error: `discovery of ${what} failed: ${(err as Error).message}` }; // not cached: may be transient
    }
    this.resources.set(cacheKey, result);
    return result;
  }

  /** The scale of each reference (deduplicated), errors included. */
  async read(refs: ReadonlyArray<{ namespace: string; ref: ScalableRef }>): Promise<ObservedScale[]> {
    const seen = new Set<string>();
    const out: ObservedScale[] = [];
    for (const { namespace, ref } of refs) {
      const id = `${ref.apiGroup}/${ref.kind}/${namespace}/${ref.name}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const base: ObservedScale = { apiGroup: ref.apiGroup, kind: ref.kind, namespace, name: ref.name };
      const res = await this.resourceOf(ref.apiGroup, ref.kind);
      if (!res.path) {
        out.push({ ...base, error: res.error! });
        continue;
      }
      try {
        const scale = await this.client.get<Scale>(res.path.replace('{ns}', encodeURIComponent(namespace)).replace('{name}', encodeURIComponent(ref.name)));
        out.push({ ...base, replicas: scale.spec?.replicas ?? scale.status?.replicas ?? 0, ...(scale.status?.selector !== undefined ? { selector: scale.status.selector } : {}) });
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 404) continue; // no such object: resolved as "not found"
        out.push({ ...base, error: `reading the scale of ${ref.kind} ${namespace}/${ref.name} failed: ${err instanceof KubeApiError ? `${err.status} ${err.reason}` : (err as Error).message}` });
      }
    }
    return out;
  }
}
