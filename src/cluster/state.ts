import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterObjects } from './objects.js';

/** What changed, when the source knows (informers do; a source may omit it). */
export interface StateChange {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'RELIST';
  /** The object after the change (before, for DELETED); absent for RELIST. */
  object?: KubernetesObject;
}

/**
 * Where the controller reads the cluster from: an informer cache on a real
 * apiserver, or the simulator's in-process cluster. Reads are from memory, never
 * from the API on a hot path.
 */
export interface ClusterStateSource {
  /** The current objects. Callers must treat them as immutable. */
  objects(): ClusterObjects;
  /** True once every watched kind has completed its initial list. */
  synced(): boolean;
  /**
   * Registers a callback for any change; returns an unsubscribe function. `change`
   * is optional: consumers must treat its absence as "something changed".
   */
  onChange(fn: (kind: keyof ClusterObjects, change?: StateChange) => void): () => void;
}
