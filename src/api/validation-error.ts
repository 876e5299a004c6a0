/**
 * A Kubernetes object that fails validation at the boundary. The message names the
 * object and the field, in one line, so the CLI can print it as is:
 * `MachineDeployment default/small: annotation capacity.cluster-autoscaler.kubernetes.io/memory: invalid quantity "12Qi"`.
 */
export class ObjectValidationError extends Error {
  constructor(
    readonly kind: string,
    /** Empty for cluster-scoped objects. */
    readonly namespace: string,
    readonly objectName: string,
    /** A field path (`spec.replicas`) or `annotation <key>` / `label <key>`. */
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${kind} ${namespace ? `${namespace}/` : ''}${objectName}: ${field}: ${problem}`);
    this.name = 'ObjectValidationError';
  }
}

/** The identity used in validation messages. */
export interface ObjectRef {
  kind: string;
  namespace: string;
  name: string;
}

/** A thrower bound to one object, so parsers read `fail('spec.replicas', 'must be ...')`. */
export function failer(ref: ObjectRef): (field: string, problem: string) => never {
  return (field, problem) => {
    throw new ObjectValidationError(ref.kind, ref.namespace, ref.name, field, problem);
  };
}
