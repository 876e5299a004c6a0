/**
 * Which of a Machine's labels Cluster API puts on its Node. CAPI v1.14's Machine
 * controller (core/reconcilers/machine/machine_controller_noderef.go, through
 * util/labels.GetManagedLabels) copies only keys whose prefix (before the `/`) is
 *  - `node-role.kubernetes.io`,
 *  - `node-restriction.kubernetes.io` or a subdomain of it,
 *  - `node.cluster.x-k8s.io` or a subdomain of it,
 * plus whatever the manager's `--additional-sync-machine-labels` regexes match (a
 * manager flag Headroom cannot see: declare such labels in the
 * capacity.cluster-autoscaler.kubernetes.io/labels annotation, as for labels the
 * kubelet or the infrastructure sets). Every other template label stays on the Machine.
 * MachinePools without Machine objects get no template labels on their Nodes at all;
 * Headroom applies the same rule to them (ADR 0011).
 */

const NODE_ROLE_PREFIX = 'node-role.kubernetes.io';
const SYNCED_DOMAINS = ['node-restriction.kubernetes.io', 'node.cluster.x-k8s.io'];

/** Whether CAPI copies the Machine label `key` to the Node. */
export function isNodeSyncedLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const prefix = key.slice(0, slash);
  return prefix === NODE_ROLE_PREFIX || SYNCED_DOMAINS.some((d) => prefix === d || prefix.endsWith(`.${d}`));
}

/** The labels of `labels` CAPI copies from a Machine to its Node. */
export function nodeSyncedLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in labels) if (isNodeSyncedLabel(k)) out[k] = labels[k]!;
  return out;
}
