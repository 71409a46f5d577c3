/**
 * A pipe job's streams as its actor sees them (actors/process/pipe-io.ts). A spawner's connection can close before the job is
 * wired up: a command that exits at once and writes nothing on stderr closes that connection while nobody reads it.
 * The job must still see both streams closed, not wait for a second of quiet.
 */
import { once } from "node:events";
import { createServer, connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { pipeIo } from "../../actors/process/pipe-io.ts";

/** A connected pair of real sockets over a loopback server. */
async function socketPair(): Promise<{ ours: Socket; theirs: Socket; close: () => void }> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  const accepted = once(server, "connection");
  const ours = connect(port, "127.0.0.1");
  await once(ours, "connect");
  const [theirs] = (await accepted) as [Socket];
  return { ours, theirs, close: () => server.close() };
}

function drainedOf(io: ReturnType<typeof pipeIo>): Promise<true> {
  return new Promise((resolve) => io.onDrained(() => resolve(true)));
}

describe("pipeIo", () => {
  it("counts a stream that closed before it was wired as closed", async () => {
    const stdout = await socketPair();
    const stderr = await socketPair();
    // The far end writes nothing on stderr and hangs up; ours reads its end and closes with nobody listening.
    stderr.theirs.end();
    if (!stderr.ours.closed) await once(stderr.ours, "close");
    const io = pipeIo({ pid: 1, spawnedAt: performance.now(), stdout: stdout.ours, stderr: stderr.ours, stdin: null, onExit: () => {} });
    const received: string[] = [];
    io.onData((source, chunk) => received.push(`${source}:${Buffer.from(chunk).toString()}`));
    const drained = drainedOf(io);
    stdout.theirs.end("DONE\n");
    expect(await drained).toBe(true);
    expect(received).toEqual(["stdout:DONE\n"]);
    stdout.close();
    stderr.close();
  });

  it("reports drained only once both streams closed", async () => {
    const stdout = await socketPair();
    const stderr = await socketPair();
    const io = pipeIo({ pid: 1, spawnedAt: performance.now(), stdout: stdout.ours, stderr: stderr.ours, stdin: null, onExit: () => {} });
    io.onData(() => {});
    let drained = false;
    io.onDrained(() => (drained = true));
    stdout.theirs.end();
    await once(stdout.ours, "close");
    expect(drained).toBe(false);
    stderr.theirs.end();
    await once(stderr.ours, "close");
    expect(drained).toBe(true);
    stdout.close();
    stderr.close();
  });
});
