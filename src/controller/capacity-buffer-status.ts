import { createHash } from 'node:crypto';
import type { KubernetesObject, V1PodTemplateSpec } from '@kubernetes/client-node';
import { CAPACITY_BUFFER_GROUP, CAPACITY_BUFFER_PLURAL, parseCapacityBuffer } from '../api/capacity-buffer.js';
import type { ScaleReader } from '../kube/scale-reader.js';
import type { ClusterCache } from '../kube/cluster-cache.js';
import { StatusLoop } from './status-loop.js';
import type { KubeClient } from '../kube/kube-client.js';
import { capacityBufferStatus, mergeBufferStatus, type BufferPlacement, type BufferStatus } from '../provisioning/capacity-buffer-status.js';
import { isBuiltinScalable, resolveCapacityBuffers, scalableTemplateName, type BufferResolution } from '../provisioning/capacity-buffers.js';
import type { CycleReport } from '../provisioning/cycle-report.js';
import type { Log } from '../api/log.js';

/**
 * The leader's CapacityBuffer loop: reads the scale subresource of custom scalables,
 * keeps a PodTemplate per scalableRef buffer (`capacitybuffer-<name>-pod-template`,
 * owned by the buffer, as Cluster Autoscaler does) so status.podTemplateRef names the
 * resolved shape, and patches each buffer's status when it differs. Chunk counts that
 * change (a scaled Deployment, a new quota) trigger a provisioning cycle.
 */

const HASH_ANNOTATION = 'headroom.dev/template-hash';

export interface CapacityBufferStatusWriterOptions {
  cache: ClusterCache;
  client: KubeClient;
  scales?: ScaleReader;
  log: Log;
  /** The last provisioning cycle, for the Provisioning condition. */
  lastCycle: () => CycleReport | undefined;
  /** Called when any buffer's chunk count changed. */
  onChunksChanged?: () => void;
  intervalMs?: number;
}

function templateHash(t: V1PodTemplateSpec): string {
  return createHash('sha256').update(JSON.stringify(t)).digest('hex').slice(0, 16);
}

export class CapacityBufferStatusWriter {
  private lastChunks = '';
  private readonly loop: StatusLoop;

  constructor(private readonly o: CapacityBufferStatusWriterOptions) {
    this.loop = new StatusLoop(() => this.syncOnce(), o.intervalMs ?? 5000, (err) => o.log(`CapacityBuffer status: ${err.message}`));
  }

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  private placement(b: BufferResolution): BufferPlacement | undefined {
    const r = this.o.lastCycle();
    const owner = `CapacityBuffer/${b.namespace}/${b.name}`;
    if (!r?.predictedOwners?.includes(owner)) return undefined;
    const unplaced = r.predictedUnplaced?.[owner];
    return unplaced ? { unplaced } : {};
  }

  /** One pass; returns how many statuses were written. */
  async syncOnce(): Promise<number> {
    const { cache, client } = this.o;
    const version = cache.capacityBufferVersion;
    if (!version || !cache.synced()) return 0;
    if (this.o.scales) {
      const refs = cache.objects().capacityBuffers.flatMap((obj) => {
        try {
          const v = parseCapacityBuffer(obj);
          return v.scalableRef && !isBuiltinScalable(v.scalableRef) ? [{ namespace: v.namespace, ref: v.scalableRef }] : [];
        } catch {
          return [];
        }
      });
      cache.setScales(await this.o.scales.read(refs));
    }
    const objects = cache.objects();
    const resolved = resolveCapacityBuffers(objects);
    const chunks = resolved.map((b) => `${b.namespace}/${b.name}=${b.replicas}`).join(',');
    if (chunks !== this.lastChunks) {
      if (this.lastChunks !== '') this.o.onChunksChanged?.();
      this.lastChunks = chunks;
    }
    const templates = new Map((objects.podTemplates ?? []).map((t) => [`${t.metadata?.namespace}/${t.metadata?.name}`, t]));
    const byUid = new Map(objects.capacityBuffers.map((o) => [o.metadata?.uid ?? `${o.metadata?.namespace}/${o.metadata?.name}`, o]));
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    let written = 0;
    for (const b of resolved) {
      const obj = byUid.get(b.uid);
      if (!obj) continue;
      let generation: number | undefined;
      try {
        if (b.podTemplateName && b.template && b.podTemplateName === scalableTemplateName(b.name) && !b.problem) {
          generation = await this.ensureTemplate(b, templates.get(`${b.namespace}/${b.podTemplateName}`), version);
        } else if (b.podTemplateName) {
          generation = templates.get(`${b.namespace}/${b.podTemplateName}`)?.metadata?.generation;
        }
        const next = capacityBufferStatus(b, now, this.placement(b), generation);
        const { status, changed } = mergeBufferStatus(obj.status as Partial<BufferStatus> | undefined, next);
        if (!changed) continue;
        await client.request('PATCH', `/apis/${CAPACITY_BUFFER_GROUP}/${version}/namespaces/${encodeURIComponent(b.namespace)}/${CAPACITY_BUFFER_PLURAL}/${encodeURIComponent(b.name)}/status`, {
          contentType: 'application/merge-patch+json', body: { status },
        });
        written++;
      } catch (err) {
        this.o.log(`CapacityBuffer ${b.namespace}/${b.name} status: ${(err as Error).message}`, { kind: 'CapacityBuffer', namespace: b.namespace, name: b.name });
      }
    }
    return written;
  }

  /** Creates or updates the buffer's PodTemplate; returns its generation. */
  private async ensureTemplate(b: BufferResolution, existing: KubernetesObject | undefined, version: string): Promise<number | undefined> {
    const template: V1PodTemplateSpec = {
      metadata: { ...(b.template!.metadata?.labels ? { labels: b.template!.metadata.labels } : {}), ...(b.template!.metadata?.annotations ? { annotations: b.template!.metadata.annotations } : {}) },
      spec: b.template!.spec!,
    };
    const hash = templateHash(template);
    if (existing?.metadata?.annotations?.[HASH_ANNOTATION] === hash) return existing.metadata.generation;
    const owned = (existing?.metadata?.ownerReferences ?? []).some((r) => r.uid === b.uid);
    if (existing && !owned) return existing.metadata?.generation; // someone else's PodTemplate: left alone
    const body = {
      apiVersion: 'v1', kind: 'PodTemplate',
      metadata: {
        name: b.podTemplateName, namespace: b.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'headroom' },
        annotations: { [HASH_ANNOTATION]: hash },
        ownerReferences: [{ apiVersion: `${CAPACITY_BUFFER_GROUP}/${version}`, kind: 'CapacityBuffer', name: b.name, uid: b.uid, controller: true }],
        ...(existing ? { resourceVersion: existing.metadata?.resourceVersion } : {}),
      },
      template,
    };
    const base = `/api/v1/namespaces/${encodeURIComponent(b.namespace)}/podtemplates`;
    const out = existing
      ? await this.o.client.request<KubernetesObject>('PUT', `${base}/${encodeURIComponent(b.podTemplateName!)}`, { body })
      : await this.o.client.request<KubernetesObject>('POST', base, { body });
    return out.metadata?.generation;
  }
}
