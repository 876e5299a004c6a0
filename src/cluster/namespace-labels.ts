import type { KubernetesObject } from '@kubernetes/client-node';

const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Labels of every namespace (for namespace selectors); the apiserver labels each with its name. */
export function namespaceLabels(namespaces: readonly KubernetesObject[], podNamespaces: ReadonlySet<string>): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  // Namespaces absent from the input still have that label.
  for (const ns of podNamespaces) out[ns] = { [NAMESPACE_NAME_LABEL]: ns };
  for (const ns of namespaces) {
    const name = ns.metadata?.name;
    if (name) out[name] = { [NAMESPACE_NAME_LABEL]: name, ...(ns.metadata?.labels ?? {}) };
  }
  return out;
}
