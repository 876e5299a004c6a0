/** A solver worker whose solve never returns (CPU-bound, as a stuck solve is): for deadline tests. */
export default function run(): never {
  for (;;) { /* spin until the pool terminates this thread */ }
}
