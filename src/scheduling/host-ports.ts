import type { V1Container, V1Pod } from '@kubernetes/client-node';

/** A host port a container asks for (the NodePorts filter's unit). */
export interface HostPort {
  port: number;
  protocol: string;
  hostIP: string;
}

const WILDCARD = '0.0.0.0';

function normalise(p: HostPort): { port: number; protocol: string; hostIP: string } {
  return { port: p.port, protocol: p.protocol || 'TCP', hostIP: p.hostIP || WILDCARD };
}

/**
 * Whether any wanted host port is already used (the NodePorts filter): same
 * protocol (default TCP) and port, and the same host IP, where 0.0.0.0 or an empty
 * host IP conflicts with every IP. Port 0 means "no host port" and never conflicts.
 */
export function hostPortsConflict(wanted: readonly HostPort[], used: readonly HostPort[]): boolean {
  if (wanted.length === 0 || used.length === 0) return false;
  for (const w0 of wanted) {
    if (!w0.port) continue;
    const w = normalise(w0);
    for (const u0 of used) {
      if (u0.port !== w.port) continue;
      const u = normalise(u0);
      if (u.protocol !== w.protocol) continue;
      if (u.hostIP === w.hostIP || u.hostIP === WILDCARD || w.hostIP === WILDCARD) return true;
    }
  }
  return false;
}

/**
 * The host ports a pod binds: those of its app containers and of its restartable
 * (sidecar) init containers, which keep running; classic init containers' ports are
 * ignored as kube-scheduler does.
 */
export function podHostPorts(pod: V1Pod): HostPort[] {
  const out: HostPort[] = [];
  const add = (c: V1Container) => {
    for (const p of c.ports ?? []) {
      if (!p.hostPort || p.hostPort <= 0) continue;
      out.push({ port: p.hostPort, protocol: p.protocol || 'TCP', hostIP: p.hostIP || WILDCARD });
    }
  };
  for (const c of pod.spec?.containers ?? []) add(c);
  for (const c of pod.spec?.initContainers ?? []) if (c.restartPolicy === 'Always') add(c);
  return out;
}
