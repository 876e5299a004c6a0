import { CPU, MEMORY, type Resources } from '../scheduling/resources.js';

/**
 * The price of a node-hour when a group has no `headroom.dev/price` annotation
 * (docs/adr/0021-derived-price.md). Linear in the node's size, so a node twice as
 * big costs twice as much and a small pod never lands on a needlessly large node:
 * the solver's first objective (least added price) then picks the smallest shape
 * that fits, and its second (fewest nodes) only breaks ties. The rates are rough
 * on-demand list prices (general purpose: per vCPU-hour and per GiB-hour; per GPU).
 */
export const DERIVED_PRICE_RATES = {
  perCore: 0.0316,
  perGiB: 0.0042,
  perGpu: 0.9,
  /** Spot capacity without an explicit price is assumed this fraction of on-demand. */
  spotFactor: 0.35,
} as const;

const GIB = 2 ** 30;

/** True for extended resources that are accelerators (`nvidia.com/gpu`, `amd.com/gpu`, `gpu.intel.com/i915`). */
export function isGpuResource(name: string): boolean {
  return name.includes('gpu');
}

/** Derived price per node-hour, rounded to 1e-6 so sums stay readable. */
export function derivedPricePerHour(allocatable: Resources, capacityType: 'on-demand' | 'spot' = 'on-demand'): number {
  let gpus = 0;
  for (const k in allocatable) if (isGpuResource(k)) gpus += allocatable[k]!;
  const onDemand = ((allocatable[CPU] ?? 0) / 1000) * DERIVED_PRICE_RATES.perCore
    + ((allocatable[MEMORY] ?? 0) / GIB) * DERIVED_PRICE_RATES.perGiB
    + gpus * DERIVED_PRICE_RATES.perGpu;
  const price = capacityType === 'spot' ? onDemand * DERIVED_PRICE_RATES.spotFactor : onDemand;
  return Math.round(price * 1e6) / 1e6;
}
