import type { ClusterObjects } from './objects.js';

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
  /** Registers a callback for any change; returns an unsubscribe function. */
  onChange(fn: (kind: keyof ClusterObjects) => void): () => void;
}
