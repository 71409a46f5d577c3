/**
 * Redaction through the whole actor: a real monitor on a real runtime whose command prints a secret from its
 * environment, and the report, the wake and the structured result that reach the model. Plus the engine fed chunks
 * that split a secret, for exact chunk boundaries.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMonitorEngine } from "../../actors/monitor/engine.ts";
import { createRedactor } from "../../actors/redact/redactor.ts";
import { marker } from "../../actors/redact/spans.ts";
import type { FinalReport, MonitorRecord } from "../../host/monitor/service.ts";
import { createJobRuntime, type SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { monitorsOn, type Monitors } from "./monitors.ts";
import type { MonitorMessage } from "../../host/delivery/results.ts";

const SECRET = "tok_9Qe7Lw2Xc5Vb8Nm4Kj6H";
const GITHUB = `ghp_${"R7".repeat(18)}`;

let runtime: SupervisedRuntime;
let monitors: Monitors;
let deliveries: MonitorMessage[];
let cwd: string;
let last: MonitorRecord | null = null;
const saved = process.env.MY_API_TOKEN;

beforeAll(() => {
  // Set before the pool starts: worker threads take a copy of the host's environment, and the job inherits it.
  process.env.MY_API_TOKEN = SECRET;
  cwd = mkdtempSync(join(tmpdir(), "pi-jobs-monitor-redaction-"));
  runtime = createJobRuntime({ warm: 1, checkMessages: true });
  monitors = monitorsOn(runtime, cwd);
  deliveries = monitors.deliveries;
});

afterAll(async () => {
  await runtime.shutdown();
  rmSync(cwd, { recursive: true, force: true });
  if (saved === undefined) delete process.env.MY_API_TOKEN;
  else process.env.MY_API_TOKEN = saved;
});

async function run(args: Record<string, unknown>, delivery: "direct" | "async" = "direct"): Promise<FinalReport> {
  const final = await monitors.run(args, delivery);
  last = final.record;
  return final;
}

/** Everything of a final report that reaches the model or the screen, as one string. */
function everything(final: FinalReport): string {
  return [final.report, final.asyncReport, JSON.stringify(final.facts)].join("\n");
}

describe("a monitor whose command prints a secret", () => {
  it("reports the capture redacted, counted and flagged, in the default and the compact report", async () => {
    for (const compact of [false, true]) {
      const final = await run({
        command: 'echo "using $MY_API_TOKEN"; echo "READY token=$MY_API_TOKEN"',
        result_pattern: "^READY token=(?<token>\\S+)$",
        completion: "exit",
        compact,
      });
      expect(final.facts.outcome.status).toBe("success");
      expect(final.report).toContain(`capture.token=${marker("MY_API_TOKEN")}`);
      expect(final.report.split("\n")).toContain("captures_redacted=true");
      // The whole match, the capture, and the two lines of the tail the outcome carries (a success's report omits it).
      expect(final.facts.outcome.redactions).toBe(4);
      expect(final.facts.outcome.capturesRedacted).toBe(true);
      expect(everything(final)).not.toContain(SECRET);
    }
  });

  it("puts redactions and capturesRedacted in the structured result", async () => {
    const final = await run({ command: 'echo "RESULT {\\"token\\":\\"$MY_API_TOKEN\\",\\"n\\":1}"', result_pattern: "^RESULT (?<json>.*)$" }, "async");
    expect(final.facts.outcome.result).toEqual({ token: marker("MY_API_TOKEN"), n: 1 });
    const delivery = deliveries.flatMap((d) => (d.kind === "report" && d.details.monitorId === final.facts.monitorId ? [d] : []))[0];
    expect(delivery?.details.result).toMatchObject({ redactions: 3, capturesRedacted: true, result: { token: marker("MY_API_TOKEN"), n: 1 } });
    expect(delivery?.content).toContain("captures_redacted=true");
    expect(everything(final)).not.toContain(SECRET);
  });

  it("redacts the diagnostic tail of a failure, shapes and env values alike, and the log keeps raw bytes", async () => {
    const final = await run({
      command: `echo "git clone https://x:${GITHUB}@github.com/o/r"; echo "auth: $MY_API_TOKEN" >&2; exit 3`,
      result_pattern: "^NEVER$",
    });
    expect(final.facts.outcome.status).toBe("failure");
    expect(final.report).toContain(marker("MY_API_TOKEN"));
    expect(final.report).toContain(marker("github_token"));
    expect(final.report).not.toContain("captures_redacted");
    expect(final.facts.outcome.redactions).toBe(2);
    expect(everything(final)).not.toContain(SECRET);
    expect(everything(final)).not.toContain(GITHUB);
    // The log on disk is the raw record (0600 in a 0700 directory).
    const logPath = last?.job.result()?.log.path;
    expect(logPath).toBeTruthy();
    expect(readFileSync(logPath as string, "utf8")).toContain(SECRET);
  });

  it("a secret written in two pieces with a pause between them is still one secret", async () => {
    const head = SECRET.slice(0, 11);
    const final = await run({
      command: `printf 'READY token=%s' "$(printf %s "$MY_API_TOKEN" | cut -c1-11)"; sleep 0.3; printf '%s\\n' "$(printf %s "$MY_API_TOKEN" | cut -c12-)"`,
      result_pattern: "^READY token=(?<token>\\S+)$",
      completion: "exit",
    });
    expect(final.facts.outcome.captures).toEqual({ token: marker("MY_API_TOKEN") });
    expect(everything(final)).not.toContain(head);
  });

  it("PI_JOBS_REDACT=0 passes raw values through (for the next job started)", async () => {
    process.env.PI_JOBS_REDACT = "0";
    try {
      const final = await run({ command: 'echo "READY $MY_API_TOKEN"', result_pattern: "^READY (?<token>\\S+)$" });
      expect(final.facts.outcome.captures).toEqual({ token: SECRET });
      expect(final.facts.outcome.redactions).toBeUndefined();
      expect(final.report).not.toContain("captures_redacted");
    } finally {
      delete process.env.PI_JOBS_REDACT;
    }
  });
});

describe("the engine, fed chunks that split a secret", () => {
  it("redacts the assembled line, in the match and in the tail", async () => {
    const redactor = createRedactor({ MY_API_TOKEN: SECRET });
    const engine = createMonitorEngine(
      { resultPattern: "^DONE (?<token>\\S+)$", failurePattern: null, completion: "exit" },
      { onDecided: () => {}, onBackpressure: () => {} },
      { redactor },
    );
    try {
      for (const chunk of [`noise ${SECRET.slice(0, 6)}`, `${SECRET.slice(6)}\nDONE ${SECRET.slice(0, 15)}`, `${SECRET.slice(15)}\n`]) {
        engine.push("stdout", Buffer.from(chunk));
      }
      engine.end("stdout");
      engine.end("stderr");
      const outcome = await engine.finish({ cause: "exit", exitCode: 0, signal: null });
      expect(outcome.status).toBe("success");
      expect(outcome.captures).toEqual({ token: marker("MY_API_TOKEN") });
      expect(outcome.output.map((line) => line.text)).toEqual([`noise ${marker("MY_API_TOKEN")}`, `DONE ${marker("MY_API_TOKEN")}`]);
      expect(outcome.redactions).toBe(4);
      expect(JSON.stringify(outcome)).not.toContain(SECRET.slice(0, 8));
    } finally {
      await engine.dispose();
    }
  });
});
