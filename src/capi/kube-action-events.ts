import { CAPI_GROUP, type CapiVersion } from '../api/capi.js';
import type { ActionEvents, PodEvent, PodRef } from './action-events.js';
import type { NodeGroupRef } from './actuator.js';
import type { EventRecorder } from './events.js';

export interface KubeActionEventsOptions {
  capiVersion: CapiVersion;
  /** Events on CAPI objects (management cluster). */
  groupEvents?: EventRecorder;
  /** Events on pods (workload cluster). */
  podEvents?: EventRecorder;
  /** At most this many pods get an event per notifyPods call (bounds writes per scale-up). Default 20. */
  maxPodEvents?: number;
}

/** ActionEvents as Kubernetes Events (events.k8s.io/v1) on the pods and node groups. */
export class KubeActionEvents implements ActionEvents {
  constructor(private readonly opts: KubeActionEventsOptions) {}

  /** The same events, written only while `term` (the leader's) holds. */
  fenced(term: AbortSignal): KubeActionEvents {
    const { groupEvents, podEvents } = this.opts;
    return new KubeActionEvents({
      ...this.opts,
      ...(groupEvents ? { groupEvents: groupEvents.withClient(groupEvents.client.fenced(term)) } : {}),
      ...(podEvents ? { podEvents: podEvents.withClient(podEvents.client.fenced(term)) } : {}),
    });
  }

  notifyGroup(group: NodeGroupRef, spec: PodEvent): void {
    if (!this.opts.groupEvents) return;
    void this.opts.groupEvents.emit({ apiVersion: `${CAPI_GROUP}/${this.opts.capiVersion}`, kind: group.kind, namespace: group.namespace, name: group.name }, spec);
  }

  notifyPods(pods: readonly PodRef[], spec: PodEvent): void {
    if (!this.opts.podEvents) return;
    for (const p of pods.slice(0, this.opts.maxPodEvents ?? 20)) {
      void this.opts.podEvents.emit({ apiVersion: 'v1', kind: 'Pod', namespace: p.namespace, name: p.name, uid: p.uid }, spec);
    }
  }
}
