import { hostname } from 'node:os';
import type { LogSubject } from '../api/log.js';
import type { KubeClient } from '../kube/kube-client.js';

/**
 * Kubernetes Events (events.k8s.io/v1) on the objects Headroom acts on and the
 * pods it acts for, so `kubectl describe` and `kubectl events` tell the story.
 * Event writes never fail an action: errors are reported to `onError` only, with
 * the object the event was about, so the log line names it.
 */

export interface EventTarget {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
}

export interface EventSpec {
  type: 'Normal' | 'Warning';
  /** CamelCase, e.g. ScaledUp, TriggeredScaleUp. */
  reason: string;
  /** CamelCase verb, e.g. ScaleUp. */
  action: string;
  note: string;
}

export const REPORTING_CONTROLLER = 'headroom.dev/controller';

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class EventRecorder {
  private readonly instance: string;
  private seq = 0;

  constructor(
    readonly client: KubeClient,
    private readonly onError: (err: unknown, about: LogSubject) => void = () => {},
    instance = hostname(),
  ) {
    this.instance = instance.slice(0, 128);
  }

  /** This recorder writing through `client` (a term-fenced view of its client, say). */
  withClient(client: KubeClient): EventRecorder {
    return new EventRecorder(client, this.onError, this.instance);
  }

  /** Posts one event; resolves when written (or failed, which is only reported). */
  async emit(target: EventTarget, spec: EventSpec, now = Date.now()): Promise<void> {
    const namespace = target.namespace || 'default';
    try {
      await this.client.request('POST', `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`, {
        body: {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          // Named as client-go's recorder names them: <object>.<unix nanos in hex>.
          metadata: { name: `${target.name.slice(0, 200)}.${(BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}`, namespace },
          eventTime: microTime(now),
          reportingController: REPORTING_CONTROLLER,
          reportingInstance: this.instance,
          action: spec.action,
          reason: spec.reason,
          type: spec.type,
          note: spec.note.slice(0, 1024),
          regarding: {
            apiVersion: target.apiVersion, kind: target.kind, name: target.name,
            ...(target.namespace ? { namespace: target.namespace } : {}),
            ...(target.uid ? { uid: target.uid } : {}),
          },
        },
      });
    } catch (err) {
      try {
        this.onError(err, { kind: target.kind, ...(target.namespace ? { namespace: target.namespace } : {}), name: target.name });
      } catch {
        // a throwing reporter must not turn into an unhandled rejection
      }
    }
  }
}
