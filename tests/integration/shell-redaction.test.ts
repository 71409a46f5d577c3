/**
 * Redaction of shell output in the actor, with real processes: an env secret echoed by the job, split across two
 * output chunks (the actor redacts the text it sends, not the chunks), token shapes, a PTY's rendered screen, the
 * retained window the console draws, and the log that keeps the raw bytes. `redact: false` (PI_JOBS_REDACT=0)
 * sends the raw values.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { marker } from "../../actors/redact/spans.ts";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { runtimeFor, shellJob } from "./helpers.ts";

const SECRET = "s3cr3t-Vb8Nm4Kj6H-x";
const GITHUB = `ghp_${"R7".repeat(18)}`;
const UNREAD = { headBytes: 8192, tailBytes: 8192 };
let runtime: SupervisedRuntime | null = null;
const savedRedact = process.env.PI_JOBS_REDACT;

afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
  if (savedRedact === undefined) delete process.env.PI_JOBS_REDACT;
  else process.env.PI_JOBS_REDACT = savedRedact;
});

// The secret's two halves reach the actor in two chunks, a good while apart.
const SPLIT = `printf 'token=%s' "\${MY_API_TOKEN%????????}"; sleep 0.4; printf '%s and ${GITHUB}\\n' "\${MY_API_TOKEN#\${MY_API_TOKEN%????????}}"`;

function job(io: "pipes" | "pty") {
  return shellJob(SPLIT, {
    env: { ...process.env, MY_API_TOKEN: SECRET } as Record<string, string>,
    io: io === "pipes" ? { kind: "pipes", stdin: false } : { kind: "pty", cols: 120, rows: 30 },
    unread: UNREAD,
  });
}

describe("shell output reaches the host redacted", () => {
  for (const io of ["pipes", "pty"] as const) {
    it(`${io}: a secret split across two chunks and a token shape are replaced; the log keeps the raw bytes`, async () => {
      runtime = runtimeFor();
      const handle = runtime.start(job(io));
      const result = await handle.done;
      expect(result.cause).toBe("exit");
      const taken = await handle.takeUnread(true, true);
      expect(taken.text).toContain(`token=${marker("MY_API_TOKEN")}`);
      expect(taken.text).toContain(marker("github_token"));
      expect(taken.text).not.toContain(SECRET);
      expect(taken.text).not.toContain(GITHUB);
      expect(taken.redactions).toBe(2);
      const window = await handle.readWindow();
      const drawn = window.lines.map((line) => line.text).join("\n");
      expect(drawn).toContain(marker("MY_API_TOKEN"));
      expect(drawn).not.toContain(SECRET);
      expect(drawn).not.toContain(GITHUB);
      const log = readFileSync(result.log.path!, "utf8");
      expect(log).toContain(`token=${SECRET}`);
      expect(log).toContain(GITHUB);
    });
  }

  it("with redaction off the raw values are sent and no redactions are counted", async () => {
    process.env.PI_JOBS_REDACT = "0";
    runtime = runtimeFor();
    const handle = runtime.start(job("pipes"));
    await handle.done;
    const taken = await handle.takeUnread(true, true);
    expect(taken.text).toContain(`token=${SECRET} and ${GITHUB}`);
    expect(taken.redactions ?? 0).toBe(0);
  });
});
