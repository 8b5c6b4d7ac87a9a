// --http-replica in a combined run: gRPC replicas and HTTP replicas are judged side by side, each by its own check.
import { afterEach, expect, it } from "vitest";
import { httpImplementation, type RunningHttpImplementation } from "../../../fixtures/implementations/http/index.js";
import { startGrpcServer } from "../../../reference-server/grpc.js";
import { checkVerdicts } from "../../helpers/cli.js";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

it("fails http.stateless.replicas for two HTTP instances that share no store, beside gRPC replicas that pass", async () => {
  const express = httpImplementation("express");
  const http: RunningHttpImplementation[] = [];
  for (let i = 0; i < 2; i++) {
    const started = await express.start();
    stops.push(() => started.close());
    http.push(started);
  }
  const grpc = [];
  for (let i = 0; i < 2; i++) {
    const server = await startGrpcServer({ port: 0, log: "silent" });
    stops.push(() => server.close());
    grpc.push(server.address);
  }
  const [primary, replica] = http.map((h) => h.urls[0] as string) as [string, string];
  const run = await checkVerdicts([
    "--grpc",
    grpc[0] as string,
    "--replica",
    grpc[1] as string,
    "--http",
    primary,
    "--http-replica",
    replica,
    "--only",
    "grpc.stateless.replicas,http.stateless.replicas",
  ]);
  expect(run.failed).toEqual(["http.stateless.replicas"]);
  expect(run.report.checks.find((c) => c.id === "grpc.stateless.replicas")?.status).toBe("pass");
  const failure = run.report.checks.find((c) => c.id === "http.stateless.replicas");
  expect(failure?.message).toMatch(
    new RegExp(`GET /messages/[0-9a-f-]{36} on ${replica.replace(/[.]/g, "\\.")} answered 404 Not Found`),
  );
  // The exchange that shows it is replayed against the replica, where it happened.
  expect(failure?.details?.some((d) => d.includes(`curl -sS -i`) && d.includes(replica))).toBe(true);
  expect(failure?.replay).toContain(`--http-replica ${replica}`);
});
