// A gRPC check's context around a fake target, as a run gives it: the shipped contract, one memo, a seed of 1.
import type { CheckContext } from "../../harness/check.js";
import type { GrpcTarget } from "../../harness/targets/grpc-target.js";

export function grpcContext(grpc: GrpcTarget, runs: number, parallelism: number): CheckContext {
  return {
    contractDir: "proto",
    grpc,
    replicas: [],
    timeoutMs: 1000,
    memo: new Map(),
    seed: 1,
    runs,
    signal: new AbortController().signal,
    parallelism,
  };
}
