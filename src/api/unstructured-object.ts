import type { KubernetesObject } from '@kubernetes/client-node';

/** A CAPI or headroom.dev object as read from the API, before src/api parses it into a typed view. */
export type UnstructuredObject = KubernetesObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
