import type { ClusterSnapshot } from '../cluster/snapshot.js';

/**
 * A snapshot cut into messages of bounded size. Structured-cloning a 20k-pod
 * snapshot costs the posting thread ~250 ms of CPU in one go; in chunks of a
 * thousand objects the event loop gets a turn between them.
 */
export interface SnapshotChunk {
  /** Present in the first chunk only. */
  head?: Omit<ClusterSnapshot, 'nodes' | 'pendingPods'>;
  nodes?: ClusterSnapshot['nodes'];
  pendingPods?: ClusterSnapshot['pendingPods'];
  last?: boolean;
}

export function* snapshotChunks(s: ClusterSnapshot, size = 1000): Generator<SnapshotChunk> {
  const { nodes, pendingPods, ...head } = s;
  yield { head };
  // Nodes carry their bound pods: count those towards the chunk size.
  let batch: ClusterSnapshot['nodes'] = [];
  let weight = 0;
  for (const n of nodes) {
    batch.push(n);
    weight += 1 + n.pods.length;
    if (weight >= size) { yield { nodes: batch }; batch = []; weight = 0; }
  }
  if (batch.length) yield { nodes: batch };
  for (let i = 0; i < pendingPods.length; i += size) yield { pendingPods: pendingPods.slice(i, i + size) };
  yield { last: true };
}

export function assembleSnapshot(chunks: readonly SnapshotChunk[]): ClusterSnapshot {
  const head = chunks[0]?.head;
  if (!head) throw new Error('snapshot chunks: the first chunk has no head');
  const nodes: ClusterSnapshot['nodes'] = [];
  const pendingPods: ClusterSnapshot['pendingPods'] = [];
  for (const c of chunks) {
    if (c.nodes) for (const n of c.nodes) nodes.push(n);
    if (c.pendingPods) for (const p of c.pendingPods) pendingPods.push(p);
  }
  return { ...head, nodes, pendingPods };
}
