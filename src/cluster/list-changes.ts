/**
 * What changed between two lists of the same objects, by identity: the objects of
 * `prev` that are gone from `next` (`removed`) and those of `next` that were not in
 * `prev` (`added`); an object replaced in place by a new version of itself (same key)
 * is reported `added` only, with the object it replaced. Every object of `prev` not
 * in `next` is thus reported once, removed or replaced. Lists from
 * a ClusterStateSource are immutable and rebuilt on every change from a store kept in
 * insertion order (an informer's Map, the simulator's), where a change replaces an
 * object in place, a new one comes last and a deleted one drops out, so one walk of
 * pointer comparisons finds the changes, and only they cost more. Any other order
 * (a relist) still gives a correct answer, every object that does not line up being
 * reported removed and added. With keys unique within each list, an object's removal
 * is always reported before the addition of a successor with its key, so a keyed map
 * that deletes on `removed` and sets on `added` ends equal to `next`.
 */
export function forEachListChange<T>(
  prev: readonly T[], next: readonly T[], key: (o: T) => string | undefined,
  removed: (o: T) => void, added: (o: T, replaced?: T) => void,
): void {
  if (prev === next) return;
  let i = 0;
  let j = 0;
  while (i < prev.length && j < next.length) {
    const a = prev[i]!;
    const b = next[j]!;
    if (a === b) {
      i++;
      j++;
    } else if (key(a) === key(b)) {
      added(b, a);
      i++;
      j++;
    } else {
      removed(a);
      i++;
    }
  }
  for (; i < prev.length; i++) removed(prev[i]!);
  for (; j < next.length; j++) added(next[j]!);
}
