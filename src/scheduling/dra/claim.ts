import type { V1NodeSelector } from '@kubernetes/client-node';

/**
 * ResourceClaims and ResourceClaimTemplates (resource.k8s.io/v1) as far as Headroom
 * models them: each request an exact count of devices of one DeviceClass, with CEL
 * selectors. What else the API can say (a prioritized list of subrequests, "All"
 * devices, admin access, consumable capacity, constraints across devices) makes the
 * claim unmodelled: its pods are held with that reason and never scale anything up.
 */

export interface DeviceRequest {
  /** The request's name in the claim. */
  name: string;
  deviceClassName: string;
  selectors: string[];
  count: number;
}

export interface ClaimSpecModel {
  requests: DeviceRequest[];
  /** Why the spec cannot be modelled; requests are then empty. */
  unmodeled?: string;
}

export interface ClaimAllocation {
  /** `driver/pool/device` of every allocated device. */
  devices: string[];
  /** Where the allocated devices are reachable; absent: everywhere. */
  nodeSelector?: V1NodeSelector;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function selectorExpressions(list: unknown, where: string): string[] | string {
  if (list === undefined) return [];
  if (!Array.isArray(list)) return `${where}.selectors is not a list`;
  const out: string[] = [];
  for (const s of list) {
    const expr = isObj(s) && isObj(s.cel) ? s.cel.expression : undefined;
    if (typeof expr !== 'string') return `${where}: a selector without a CEL expression`;
    out.push(expr);
  }
  return out;
}

/** A ResourceClaimSpec (a claim's spec, or a template's spec.spec). */
export function parseClaimSpec(spec: unknown): ClaimSpecModel {
  const unmodeled = (why: string): ClaimSpecModel => ({ requests: [], unmodeled: why });
  const devices = isObj(spec) && isObj(spec.devices) ? spec.devices : {};
  const raw = Array.isArray(devices.requests) ? devices.requests : [];
  const requests: DeviceRequest[] = [];
  for (const r of raw) {
    if (!isObj(r) || typeof r.name !== 'string') return unmodeled('a device request has no name');
    const where = `request ${r.name}`;
    if (r.firstAvailable !== undefined) return unmodeled(`${where} uses firstAvailable (prioritized alternatives)`);
    const x = r.exactly;
    if (!isObj(x)) return unmodeled(`${where} has no exactly`);
    if (typeof x.deviceClassName !== 'string' || !x.deviceClassName) return unmodeled(`${where} has no deviceClassName`);
    const mode = x.allocationMode ?? 'ExactCount';
    if (mode !== 'ExactCount') return unmodeled(`${where} uses allocationMode ${String(mode)}`);
    if (x.adminAccess === true) return unmodeled(`${where} asks for admin access`);
    if (x.capacity !== undefined) return unmodeled(`${where} requests device capacity (consumable capacity)`);
    const count = x.count ?? 1;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) return unmodeled(`${where} has an invalid count`);
    const selectors = selectorExpressions(x.selectors, where);
    if (typeof selectors === 'string') return unmodeled(selectors);
    requests.push({ name: r.name, deviceClassName: x.deviceClassName, selectors, count });
  }
  const constraints = Array.isArray(devices.constraints) ? devices.constraints : [];
  for (const c of constraints) {
    if (!isObj(c)) continue;
    const names = Array.isArray(c.requests) && c.requests.length ? c.requests as string[] : requests.map((r) => r.name);
    const total = requests.filter((r) => names.includes(r.name)).reduce((n, r) => n + r.count, 0);
    // A constraint over one device always holds.
    if (total > 1) return unmodeled(`a constraint (${typeof c.matchAttribute === 'string' ? `matchAttribute ${c.matchAttribute}` : 'distinctAttribute'}) spans ${total} devices`);
  }
  return { requests };
}

/** status.allocation of a claim, if allocated. */
export function parseClaimAllocation(status: unknown): ClaimAllocation | undefined {
  const a = isObj(status) ? status.allocation : undefined;
  if (!isObj(a)) return undefined;
  const results = isObj(a.devices) && Array.isArray(a.devices.results) ? a.devices.results : [];
  const devices: string[] = [];
  for (const r of results) {
    if (isObj(r) && typeof r.driver === 'string' && typeof r.pool === 'string' && typeof r.device === 'string') devices.push(`${r.driver}/${r.pool}/${r.device}`);
  }
  const out: ClaimAllocation = { devices };
  if (isObj(a.nodeSelector)) out.nodeSelector = a.nodeSelector as unknown as V1NodeSelector;
  return out;
}

/** A DeviceClass's selectors; a string when it cannot be read. */
export function deviceClassSelectors(spec: unknown): string[] | string {
  if (!isObj(spec)) return [];
  return selectorExpressions(spec.selectors, 'deviceclass');
}
