/**
 * A status condition as metav1.Condition serialises it: what NodePools,
 * CapacityBuffers and ProvisioningRequests carry in status.conditions.
 */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  /** RFC 3339, seconds. */
  lastTransitionTime: string;
  observedGeneration?: number;
}
