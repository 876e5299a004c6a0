import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { PodClass } from './pod-classes.js';
import type { OwnerCounter, SpreadCounter, SpreadRef, TermCounter, TermRef } from './topology.js';

/** A class at one rung of its relaxation ladder, with its constraints bound to shared counters. */
export interface ClassLevel {
  cls: PodClass;
  level: number;
  last: boolean;
  pod: SchedulingPod;
  avoidPreferNoSchedule: boolean;
  relaxed: string[];
  affinity: TermRef[];
  anti: TermRef[];
  spreads: SpreadRef[];
  /** Whether some constraint depends on non-hostname domains (zone spread, zone affinity...). */
  zonal: boolean;
  /** 0 unknown, 1 feasible, 2 not: static checks against each group's template. */
  groupFeasible: Uint8Array;
  existingFeasible: Uint8Array;
}

export interface ClassState {
  cls: PodClass;
  levels: ClassLevel[];
  /** Required anti-affinity terms of other (and its own) pods that select this class. */
  owners: OwnerCounter[];
  /** Counters this class's pods add to when placed. */
  matchTerms: TermCounter[];
  matchSpreads: SpreadCounter[];
  ownTerms: OwnerCounter[];
  /** Pods of the class not placed yet. */
  remaining: number;
  /** Pods of the class reported unschedulable. */
  unschedulable: number;
  /** Per-node cap from hostname anti-affinity / spread, and the key of the pods sharing it. */
  hostnameCap: number;
  hostnameKey?: string;
}
