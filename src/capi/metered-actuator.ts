import { FencedError, KubeApiError } from '../kube/kube-client.js';
import type { CapiActuator } from './actuator.js';

/**
 * What a call to the CAPI port took, for Karpenter's cloud-provider metrics
 * (headroom_cloudprovider_duration_seconds and _errors_total): the method, its
 * duration and, when it failed, a bounded error class.
 */
export type CapiCallObserver = (method: string, seconds: number, error?: CapiErrorClass) => void;

export type CapiErrorClass =
  | 'BadRequest' | 'Unauthorized' | 'Forbidden' | 'NotFound' | 'Conflict' | 'Gone' | 'Invalid' | 'TooManyRequests'
  | 'ServerError' | 'Fenced' | 'Other';

const BY_STATUS: Record<number, CapiErrorClass> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 410: 'Gone', 422: 'Invalid', 429: 'TooManyRequests',
};

/** A fixed set of classes (never the server's free-text reason), so the label stays bounded. */
export function capiErrorClass(err: unknown): CapiErrorClass {
  if (err instanceof FencedError) return 'Fenced';
  if (err instanceof KubeApiError) return BY_STATUS[err.status] ?? (err.status >= 500 ? 'ServerError' : 'Other');
  return 'Other';
}

/**
 * `actuator` with every call to the API timed and its failures classified: a
 * decorator around the port, so any implementation (kube, simulated) is measured the
 * same way and no caller knows. Events are another port (ActionEvents), not metered here.
 */
export class MeteredActuator implements CapiActuator {
  constructor(
    private readonly inner: CapiActuator,
    private readonly observe: CapiCallObserver,
    private readonly now: () => number = () => performance.now(),
  ) {}

  getReplicas(...args: Parameters<CapiActuator['getReplicas']>): ReturnType<CapiActuator['getReplicas']> {
    return this.timed('getReplicas', () => this.inner.getReplicas(...args));
  }

  scaleTo(...args: Parameters<CapiActuator['scaleTo']>): ReturnType<CapiActuator['scaleTo']> {
    return this.timed('scaleTo', () => this.inner.scaleTo(...args));
  }

  deleteMachine(...args: Parameters<CapiActuator['deleteMachine']>): ReturnType<CapiActuator['deleteMachine']> {
    return this.timed('deleteMachine', () => this.inner.deleteMachine(...args));
  }

  deleteMachines(...args: Parameters<CapiActuator['deleteMachines']>): ReturnType<CapiActuator['deleteMachines']> {
    return this.timed('deleteMachines', () => this.inner.deleteMachines(...args));
  }

  createMachine(...args: Parameters<CapiActuator['createMachine']>): ReturnType<CapiActuator['createMachine']> {
    return this.timed('createMachine', () => this.inner.createMachine(...args));
  }

  deleteStandaloneMachine(...args: Parameters<CapiActuator['deleteStandaloneMachine']>): ReturnType<CapiActuator['deleteStandaloneMachine']> {
    return this.timed('deleteStandaloneMachine', () => this.inner.deleteStandaloneMachine(...args));
  }

  private async timed<T>(method: string, call: () => Promise<T>): Promise<T> {
    const start = this.now();
    try {
      const result = await call();
      this.observe(method, (this.now() - start) / 1000);
      return result;
    } catch (err) {
      this.observe(method, (this.now() - start) / 1000, capiErrorClass(err));
      throw err;
    }
  }
}
