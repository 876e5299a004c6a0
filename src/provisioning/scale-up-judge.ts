import type { LogSubject } from '../api/log.js';
import type { ActionEvents, PodRef } from '../capi/action-events.js';
import type { NodeGroupRef } from '../capi/actuator.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { CycleReport } from './cycle-report.js';
import type { GroupBackoff } from './provision-failures.js';
import { judgeScaleUp, judgeView, newNodeNames, readyTimes, type ScaleUpEffectOptions, type ScaleUpRecord } from './scale-up-effect.js';

/** Scale-ups remembered for judging at most (each holds its pods' keys). */
const MAX_SCALE_UP_RECORDS = 1000;

export interface ScaleUpJudgeDeps {
  backoff: GroupBackoff;
  /** Events on the groups judged; none in the simulator. */
  events: ActionEvents | undefined;
  log: (msg: string, about?: LogSubject) => void;
  /** A group stopped backing off because its new node took pods. */
  onRecovered: (groupId: string) => void;
}

/**
 * The scale-ups written for pending pods, until judged helpful or moot, and their
 * judging in later cycles (scale-up-effect.ts decides; this carries the outcome out):
 * a group whose new nodes took none of its pods and cannot take them backs off, with a
 * Warning event; one whose new node took a pod stops backing off. Memory that only
 * delays scale-ups, never adds one.
 */
export class ScaleUpJudge {
  private records: ScaleUpRecord[] = [];

  constructor(private readonly deps: ScaleUpJudgeDeps, private readonly options: ScaleUpEffectOptions) {}

  /** True while some scale-up waits to be judged (a cycle must then build its snapshot). */
  waiting(): boolean {
    return this.records.length > 0;
  }

  /**
   * A recorder for the scale-ups written on `snapshot`: each remembers the group's nodes
   * before it. It is called just before the write (write-ahead), waits for `stored` (the
   * record kept on the group, ADR 0120), and returns what forgets the record if the write
   * then added nothing.
   */
  recorder(
    snapshot: ClusterSnapshot, now: () => number, stored: (groupId: string) => Promise<void>,
  ): (groupId: string, pods: readonly PodRef[]) => Promise<() => void> {
    const nodesOfGroup = new Map<string, Set<string>>();
    for (const n of snapshot.nodes) {
      if (n.inFlight || !n.groupId) continue;
      let set = nodesOfGroup.get(n.groupId);
      if (!set) nodesOfGroup.set(n.groupId, (set = new Set()));
      set.add(n.name);
    }
    return async (groupId, pods) => {
      if (pods.length === 0 || this.records.length >= MAX_SCALE_UP_RECORDS) return () => {};
      const record: ScaleUpRecord = {
        groupId, writtenAt: now(), pods: pods.map((p) => `${p.namespace}/${p.name}`), nodesBefore: nodesOfGroup.get(groupId) ?? new Set(),
      };
      this.records.push(record);
      await stored(groupId);
      return () => {
        this.records = this.records.filter((r) => r !== record);
      };
    };
  }

  /** Takes over scale-ups a previous leader kept (ADR 0120), up to the bound. */
  restore(records: readonly ScaleUpRecord[]): void {
    for (const r of records) if (this.records.length < MAX_SCALE_UP_RECORDS) this.records.push(r);
  }

  /** The groups of the remembered scale-ups (one entry per record). */
  groupIds(): string[] {
    return this.records.map((r) => r.groupId);
  }

  /** The remembered scale-ups of `groupId`. */
  recordsOf(groupId: string): ScaleUpRecord[] {
    return this.records.filter((r) => r.groupId === groupId);
  }

  /**
   * Judges every remembered scale-up on `snapshot`; returns the groups whose new nodes
   * are Ready but cannot take their pods yet (held while that settles), with why.
   */
  judge(snapshot: ClusterSnapshot, objects: ClusterObjects, now: number, report: CycleReport): Map<string, string> {
    const settling = new Map<string, string>();
    if (this.records.length === 0) return settling;
    const { backoff, events, log } = this.deps;
    const view = judgeView(snapshot);
    const readySince = readyTimes(objects.nodes, newNodeNames(this.records, view));
    const poolOf = new Map(snapshot.groups.map((g) => [g.id, g.nodePool]));
    const kept: ScaleUpRecord[] = [];
    for (const record of this.records) {
      const outcome = judgeScaleUp(record, view, readySince, now, this.options);
      const [kind, namespace, name] = record.groupId.split('/') as [NodeGroupRef['kind'], string, string];
      const group: NodeGroupRef = { kind, namespace, name };
      if (outcome.kind === 'waiting') {
        if (outcome.usable) delete record.unusable;
        kept.push(record);
      } else if (outcome.kind === 'settling') {
        record.unusable = { nodes: outcome.nodes, since: outcome.since, reason: outcome.reason };
        kept.push(record);
        settling.set(record.groupId, `new node(s) ${outcome.nodes.join(', ')} of ${record.groupId} are Ready but cannot take the pods that triggered them yet; waiting to see whether they do`);
      } else if (outcome.kind === 'did-not-help') {
        const until = backoff.fail(record.groupId, now, 'a scale-up that did not help its pods');
        record.didNotHelpAt = now;
        kept.push(record);
        const nodePool = poolOf.get(record.groupId);
        (report.ineffectiveScaleUps ??= []).push({ group: record.groupId, ...(nodePool ? { nodePool } : {}), nodes: outcome.nodes, pending: outcome.pending, reason: outcome.reason, until });
        const note = `scale-up did not help: ${outcome.pending} pod(s) that triggered it are still pending and ${outcome.reason}; `
          + `${record.groupId} backs off until ${new Date(until).toISOString()}`;
        log(note, group);
        events?.notifyGroup(group, { type: 'Warning', reason: 'ScaleUpDidNotHelp', action: 'ScaleUp', note });
      } else if (outcome.kind === 'helped' && backoff.recover(record.groupId, now)) {
        (report.recoveredGroups ??= []).push(record.groupId);
        const note = `new node ${outcome.nodes[0]} took pods: ${record.groupId} no longer backs off`;
        log(note, group);
        this.deps.onRecovered(record.groupId);
        events?.notifyGroup(group, { type: 'Normal', reason: 'ScaleUpHelped', action: 'ScaleUp', note });
      }
    }
    this.records = kept;
    return settling;
  }
}
