import { DraQuantityError, parseNanoQuantity } from './quantity.js';

/**
 * A device as a DRA driver publishes it in a ResourceSlice (resource.k8s.io/v1), in
 * the form the CEL selectors read: attributes and capacity grouped by domain (a
 * qualified name without a domain is in the driver's), capacity in nano-units.
 */
export interface Device {
  driver: string;
  pool: string;
  name: string;
  /** domain -> attribute name -> value (int as bigint, version as `{ version }`). */
  attributes: Record<string, Record<string, DeviceAttribute>>;
  /** domain -> capacity name -> nano-units. */
  capacity: Record<string, Record<string, bigint>>;
}

export type DeviceAttribute = bigint | boolean | string | { version: string };

/** Devices of one node (or of a template node), and what of its slices Headroom does not model. */
export interface NodeDevices {
  devices: Device[];
  /** Devices left out: partitionable ones (shared counters), or on a slice Headroom cannot read. */
  skipped: string[];
}

/** `driver/pool/device`: how an allocation result names a device. */
export function deviceId(d: { driver: string; pool: string; name: string }): string {
  return `${d.driver}/${d.pool}/${d.name}`;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function splitQualified(name: string, driver: string): [string, string] {
  const slash = name.indexOf('/');
  return slash < 0 ? [driver, name] : [name.slice(0, slash), name.slice(slash + 1)];
}

function attributeValue(v: unknown): DeviceAttribute | undefined {
  if (!isObj(v)) return undefined;
  if (typeof v.int === 'number' || typeof v.int === 'string') return BigInt(v.int);
  if (typeof v.bool === 'boolean') return v.bool;
  if (typeof v.string === 'string') return v.string;
  if (typeof v.version === 'string') return { version: v.version };
  return undefined;
}

/**
 * The devices of a ResourceSlice's spec (resource.k8s.io/v1: `devices[]` with
 * attributes and capacity). A device that consumes shared counters (a partition of a
 * partitionable device) is skipped: allocating it uses up its siblings, which this
 * model does not count, so it is never offered as free. Throws Error for a device
 * the apiserver would not have accepted.
 */
export function sliceDevices(spec: unknown): NodeDevices {
  if (!isObj(spec)) throw new Error('spec is not an object');
  const driver = spec.driver;
  const pool = isObj(spec.pool) ? spec.pool.name : undefined;
  if (typeof driver !== 'string' || !driver) throw new Error('spec.driver is required');
  if (typeof pool !== 'string' || !pool) throw new Error('spec.pool.name is required');
  const out: NodeDevices = { devices: [], skipped: [] };
  const list = Array.isArray(spec.devices) ? spec.devices : [];
  for (const raw of list) {
    if (!isObj(raw) || typeof raw.name !== 'string') throw new Error('a device has no name');
    if (Array.isArray(raw.consumesCounters) && raw.consumesCounters.length > 0) {
      out.skipped.push(`${driver}/${pool}/${raw.name} (partitionable)`);
      continue;
    }
    const device: Device = { driver, pool, name: raw.name, attributes: {}, capacity: {} };
    for (const [k, v] of Object.entries(isObj(raw.attributes) ? raw.attributes : {})) {
      const value = attributeValue(v);
      if (value === undefined) throw new Error(`device ${raw.name}: attribute ${k} has no int, bool, string or version`);
      const [domain, name] = splitQualified(k, driver);
      (device.attributes[domain] ??= {})[name] = value;
    }
    for (const [k, v] of Object.entries(isObj(raw.capacity) ? raw.capacity : {})) {
      const q = isObj(v) ? v.value : undefined;
      if (typeof q !== 'string' && typeof q !== 'number') throw new Error(`device ${raw.name}: capacity ${k} has no value`);
      let nano: bigint;
      try {
        nano = parseNanoQuantity(String(q));
      } catch (err) {
        if (err instanceof DraQuantityError) throw new Error(`device ${raw.name}: capacity ${k}: ${err.message}`);
        throw err;
      }
      const [domain, name] = splitQualified(k, driver);
      (device.capacity[domain] ??= {})[name] = nano;
    }
    out.devices.push(device);
  }
  return out;
}

/**
 * The devices Cluster Autoscaler's clusterapi provider puts on a template node for
 * `capacity.cluster-autoscaler.kubernetes.io/dra-driver` + `gpu-count`
 * (InstanceResourceSlices, CA 1.36): one pool named after the node, devices
 * `gpu-0` .. `gpu-<n-1>`, each with the one attribute `type: "gpu"` (in the driver's
 * domain) and no capacity.
 */
export function countedGpuDevices(driver: string, count: number, pool: string): Device[] {
  const out: Device[] = [];
  for (let i = 0; i < count; i++) out.push({ driver, pool, name: `gpu-${i}`, attributes: { [driver]: { type: 'gpu' } }, capacity: {} });
  return out;
}

/** A key equal for devices a selector cannot tell apart (driver, attributes, capacity), for memoizing. */
export function deviceShapeKey(d: Device): string {
  // A bigint becomes an object, so no string attribute can spell it ("5n" is not 5).
  return JSON.stringify([d.driver, d.attributes, d.capacity], (_k, v: unknown) => (typeof v === 'bigint' ? { int: String(v) } : v));
}
