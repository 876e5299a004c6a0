import type { LogSubject } from '../api/log.js';
import type { CapiActuator, NodeGroupRef } from '../capi/actuator.js';
import type { CycleReport } from './cycle-report.js';
import type { GroupBackoff, ProvisionFailure } from './provision-failures.js';
import { checkTerm } from './solve-deadline.js';

export interface FailedProvisionDeps {
  actuator: CapiActuator;
  backoff: GroupBackoff;
  /** The leadership term: checked before each write (a lost term throws TermEndedError). */
  term: AbortSignal | undefined;
  stats: { errors: number };
  log: (msg: string, about?: LogSubject) => void;
}

/**
 * Removes the Machines that failed or did not become Ready nodes within the max
 * provision time (provision-failures.ts finds them) and backs their groups off: a
 * standalone Machine is deleted, a group's Machine goes through deleteMachine (never
 * below min size). Fills report.provisionFailures; returns the `namespace/name` of the
 * Machines removed, which the next plan must not count as in flight.
 */
export async function removeFailedProvisions(
  failures: readonly ProvisionFailure[], now: number, deps: FailedProvisionDeps, report: CycleReport,
): Promise<string[]> {
  const { actuator, backoff, log } = deps;
  const removed: string[] = [];
  report.provisionFailures = [];
  for (const f of failures) {
    const entry: NonNullable<CycleReport['provisionFailures']>[number] = {
      machine: `${f.machine.namespace}/${f.machine.name}`, group: f.groupId, kind: f.kind, ...(f.nodePool ? { nodePool: f.nodePool } : {}),
    };
    report.provisionFailures.push(entry);
    const until = backoff.fail(f.groupId, now);
    const reason = `${f.detail}; ${f.groupId} backs off until ${new Date(until).toISOString()}`;
    log(`provisioning failed: ${reason}`, { kind: 'Machine', namespace: f.machine.namespace, name: f.machine.name });
    try {
      checkTerm(deps.term);
      if (f.nodePool) {
        await actuator.deleteStandaloneMachine(f.machine, reason);
      } else {
        const [kind, namespace, name] = f.groupId.split('/') as [NodeGroupRef['kind'], string, string];
        const result = await actuator.deleteMachine({ kind, namespace, name }, f.machine, reason);
        if (!result.written) throw new Error('not removed (the group is at its min size, or dry run)');
      }
      removed.push(entry.machine);
    } catch (err) {
      checkTerm(deps.term);
      entry.error = (err as Error).message;
      deps.stats.errors++;
      log(`removing ${entry.machine} failed: ${entry.error}`, { kind: 'Machine', namespace: f.machine.namespace, name: f.machine.name });
    }
  }
  return removed;
}
