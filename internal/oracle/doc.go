// Package oracle computes the server_summary blocks a harvest should
// produce from the raw samples that reached Prometheus (simrun's exported
// series), WITHOUT PromQL and without pkg/harvest's code (it uses only its
// parameter and result types). It composes simrun's Prometheus 2.42
// primitives, which promtest checks against the real Prometheus, the way
// 2.42 evaluates the harvest's queries:
//
//   - instant vector selector at t: simrun's lookback value (the latest
//     sample in [t-5m, t], closed on both ends in 2.42);
//   - rate(x[1m]) at t: simrun's extrapolatedRate over [t-60s, t];
//   - sum/max/count by: input in storage order (label-sorted), first value
//     then `+=`, like 2.42's aggregation (no Kahan summation before 2.50);
//   - `and on (L)`: left elements whose L-signature appears on the right;
//   - range queries: the instant evaluation at start, start+10, ... <= end.
//
// The block rules (live ateapi, which series each window growth and
// quantile covers, grid walks) are written here, and the per-series window
// growth in simrun, from the spec text, on purpose independently of
// pkg/harvest, so a shared misreading shows up as a disagreement with the
// semantic truth that pkg/harvest's tests assert elsewhere.
package oracle
