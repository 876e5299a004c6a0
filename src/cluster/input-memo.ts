/**
 * A one-entry memo keyed by the identity of a few input values (lists of a
 * ClusterObjects, which are immutable by contract: a change is a new list). Derived
 * views such as CapacityBuffer chunks are recomputed only when one of their inputs is
 * a different value, not every time any other kind changes.
 */
export function lastInputMemo<I extends readonly unknown[], R>(fn: (...inputs: I) => R): (...inputs: I) => R {
  let last: { inputs: I; result: R } | undefined;
  return (...inputs: I) => {
    if (last && last.inputs.length === inputs.length && last.inputs.every((v, i) => v === inputs[i])) return last.result;
    const result = fn(...inputs);
    last = { inputs, result };
    return result;
  };
}
