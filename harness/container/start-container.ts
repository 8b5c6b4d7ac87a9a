// Starts a target from an image with testcontainers, waits until it answers, and always removes it again.
import type { Readable } from "node:stream";
import { fromBinary } from "@bufbuild/protobuf";
import {
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "../_internals/gen/grpc/health/v1/health_pb.js";
import { ConformanceError } from "../errors.js";
import { probeGrpcHandshake } from "../targets/rpc-probes.js";

export interface ContainerOptions {
  image: string;
  /** The port the image serves gRPC on, inside the container. */
  grpcPort: number;
  /** The port the image serves its HTTP interface on, when it has one. */
  httpPort?: number;
  env?: Readonly<Record<string, string>>;
  /** Wait for a log line matching this instead of probing the port. */
  waitLog?: RegExp;
  /** Bound on pulling, starting and becoming ready. */
  startupTimeoutMs?: number;
}

export interface StartedContainer {
  /** HOST:PORT of the mapped gRPC port (127.0.0.1 for a local engine). */
  grpcAddress: string;
  /** http://127.0.0.1:PORT of the mapped HTTP port, when asked for. */
  httpUrl?: string;
  /** The content address of the image the container runs (the engine's image ID, sha256:...), when it says. */
  imageDigest?: string;
  /** The container's last log lines (stdout and stderr), for a report. */
  logTail(): string[];
  /** Stops and removes the container; safe to call more than once. */
  stop(): Promise<void>;
}

/** Every container this product starts carries it, so that leftovers can be found (docker ps -a --filter label=...). */
export const CONTAINER_LABEL = "org.example-conformance.run";
const LOG_LINES = 200;
const READY_POLL_MS = 200;

/** testcontainers and the Docker engine it reaches: exit 70 without the package, exit 3 without an engine. */
async function containerRuntime() {
  let testcontainers: typeof import("testcontainers");
  try {
    testcontainers = await import("testcontainers");
  } catch (err) {
    throw new ConformanceError(
      "config",
      `--image needs the testcontainers package: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  try {
    return { testcontainers, client: await testcontainers.getContainerRuntimeClient() };
  } catch (err) {
    const why = err instanceof Error ? err.message.split("\n")[0] : String(err);
    throw new ConformanceError("unreachable", `no Docker engine: ${why}`);
  }
}

/**
 * Where the engine publishes ports: this machine for a local engine (as IPv4 loopback, where Docker binds), the
 * engine's host for a remote one (Docker-in-Docker in CI, TESTCONTAINERS_HOST_OVERRIDE). (testcontainers may name
 * the bridge gateway for a local engine when it believes it runs in a container, but a local engine publishes on
 * this machine's loopback.)
 */
function publishedHost(engineHost: string): string {
  const localEngine =
    !process.env.TESTCONTAINERS_HOST_OVERRIDE &&
    (!process.env.DOCKER_HOST || process.env.DOCKER_HOST.startsWith("unix://"));
  const reported = localEngine ? "127.0.0.1" : engineHost;
  return reported === "localhost" ? "127.0.0.1" : reported.includes(":") ? `[${reported}]` : reported;
}

export async function startContainer(options: ContainerOptions): Promise<StartedContainer> {
  const startupTimeoutMs = options.startupTimeoutMs ?? 60_000;
  const { testcontainers, client } = await containerRuntime();
  const { GenericContainer, StartupCheckStrategy, Wait } = testcontainers;

  /** Readiness is ours to judge (below), so testcontainers only waits for the container to run. */
  class Running extends StartupCheckStrategy {
    override async checkStartupState(): Promise<"SUCCESS"> {
      return "SUCCESS";
    }
  }

  const lines: string[] = [];
  const keep = keepLastLines(lines);
  const ports = [options.grpcPort, ...(options.httpPort !== undefined ? [options.httpPort] : [])];
  let container: Awaited<ReturnType<InstanceType<typeof GenericContainer>["start"]>>;
  try {
    container = await new GenericContainer(options.image)
      .withExposedPorts(...ports)
      .withEnvironment({ ...options.env })
      .withLabels({ [CONTAINER_LABEL]: String(process.pid) })
      .withLogConsumer(keep)
      .withWaitStrategy(options.waitLog ? Wait.forLogMessage(options.waitLog) : new Running())
      .withStartupTimeout(startupTimeoutMs)
      .start();
  } catch (err) {
    const why = err instanceof Error ? err.message.split("\n")[0] : String(err);
    throw new ConformanceError("unreachable", `--image ${options.image}: the container did not start: ${why}`);
  }

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= container.stop({ remove: true, removeVolumes: true, timeout: 5_000 }).then(
      () => undefined,
      () => undefined,
    );
    return stopped;
  };
  try {
    const host = publishedHost(container.getHost());
    const grpcAddress = `${host}:${container.getMappedPort(options.grpcPort)}`;
    const httpUrl =
      options.httpPort !== undefined ? `http://${host}:${container.getMappedPort(options.httpPort)}` : undefined;
    if (!options.waitLog) {
      const exited = async () => {
        try {
          const state = (await client.container.getById(container.getId()).inspect()).State;
          return state && !state.Running ? `it exited with code ${state.ExitCode}` : undefined;
        } catch {
          return undefined;
        }
      };
      await waitUntilServing(grpcAddress, startupTimeoutMs, () => lines.slice(-5).join(" | "), exited);
    }
    const imageDigest = await imageDigestOf(client, container.getId());
    return {
      grpcAddress,
      ...(httpUrl !== undefined && { httpUrl }),
      ...(imageDigest !== undefined && { imageDigest }),
      logTail: () => [...lines],
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A log consumer that keeps the stream's last LOG_LINES whole lines in `lines`. */
function keepLastLines(lines: string[]): (stream: Readable) => void {
  return (stream) => {
    let partial = "";
    stream.on("data", (chunk: Buffer | string) => {
      const text = partial + chunk.toString();
      const parts = text.split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        if (lines.length > LOG_LINES) lines.shift();
      }
    });
    stream.on("error", () => undefined);
  };
}

/**
 * What the run certifies is this image, whatever tag named it: its ID is a digest of its content. Undefined when
 * the runtime does not say; the report then names the image by its name alone.
 */
async function imageDigestOf(
  client: Awaited<ReturnType<typeof containerRuntime>>["client"],
  id: string,
): Promise<string | undefined> {
  try {
    const image = (await client.container.getById(id).inspect()).Image;
    return typeof image === "string" && /^sha256:[0-9a-f]{64}$/.test(image) ? image : undefined;
  } catch {
    return undefined;
  }
}

/** Ready when the port completes an HTTP/2 handshake, and, if the image serves grpc.health.v1, reports SERVING. */
async function waitUntilServing(
  address: string,
  timeoutMs: number,
  lastLog: () => string,
  exited: () => Promise<string | undefined>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let why = "";
  while (Date.now() < deadline) {
    const gone = await exited();
    if (gone !== undefined)
      throw new ConformanceError(
        "unreachable",
        `the container stopped before it answered: ${gone}; its log: ${lastLog() || "empty"}`,
      );
    const reason = await probeGrpcHandshake({ address, timeoutMs: 1000 });
    if (reason === undefined) {
      const health = await healthStatus(address);
      if (health === "SERVING" || health === "UNIMPLEMENTED") return;
      why = `health says ${health}`;
    } else {
      why = reason;
    }
    await new Promise((r) => setTimeout(r, READY_POLL_MS));
  }
  throw new ConformanceError(
    "unreachable",
    `the container did not answer on ${address} within ${timeoutMs} ms (${why}); its log: ${lastLog() || "empty"}`,
  );
}

/**
 * The name of the status grpc.health.v1 Check reports for every service, UNIMPLEMENTED without it, or why it is
 * unreadable.
 */
export async function healthStatus(address: string): Promise<string> {
  const grpc = await import("@grpc/grpc-js");
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    "grpc.use_local_subchannel_pool": 1,
    "grpc.enable_channelz": 0,
  });
  try {
    // grpc.health.v1.HealthCheckRequest{} (every service) encodes to no bytes.
    return await new Promise<string>((resolve) => {
      client.makeUnaryRequest(
        "/grpc.health.v1.Health/Check",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        new grpc.Metadata(),
        { deadline: Date.now() + 1000 },
        (err, res) => {
          if (err)
            return resolve(
              err.code === grpc.status.UNIMPLEMENTED ? "UNIMPLEMENTED" : (grpc.status[err.code] ?? String(err.code)),
            );
          let status: HealthCheckResponse_ServingStatus;
          try {
            status = fromBinary(HealthCheckResponseSchema, res ?? Buffer.alloc(0)).status;
          } catch {
            return resolve("a malformed HealthCheckResponse");
          }
          resolve(HealthCheckResponse_ServingStatus[status] ?? String(status));
        },
      );
    });
  } finally {
    client.close();
  }
}
