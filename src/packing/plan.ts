/**
 * The plan: what Headroom would do. Its JSON form is the stable output contract of
 * `headroom plan -o json`; the actuator, simulator and extender consume it too.
 */
import type { NodeGroupKind } from '../api/capi.js';

export interface ScaleUp {
  kind: NodeGroupKind;
  namespace: string;
  name: string;
  from: number;
  to: number;
}

/** A pod placed on an existing (or in-flight) node, or on the n-th new node of a group. */
export type Placement =
  | { pod: string; node: string }
  | { pod: string; group: string; newNode: number };

export interface UnschedulablePod {
  pod: string;
  reason: string;
}

export interface Plan {
  scaleUps: ScaleUp[];
  placements: Placement[];
  unschedulable: UnschedulablePod[];
  cost: { addedPerHour: number };
}
