/**
 * Folded reads over real processes, pipes and PTYs: a long build's noise folds into a few lines while its result line
 * and last lines stay verbatim, 10,000 errors of one shape read as their first and last ones and how many more there
 * were, an error printed in the middle of a long run survives the cut, every shown line is a
 * whole line, `raw: true` gives the head and tail as printed, secrets are replaced before anything is folded, and the
 * log keeps every byte.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { marker } from "../../actors/redact/spans.ts";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { ShellService, type CallContext } from "../../host/shell/service.ts";
import { createShellState } from "../../host/shell/state.ts";
import { runtimeFor, waitFor } from "./helpers.ts";

const SECRET = "s3cr3t-Vb8Nm4Kj6H-x";
let runtime: SupervisedRuntime;
let service: ShellService;
let calls = 0;

const call = (): CallContext => ({ toolCallId: `fold-${(calls += 1)}`, cwd: tmpdir() });

beforeAll(() => {
  // The job threads copy the host's environment: the secret is one of the values the actor redacts.
  process.env.MY_API_TOKEN = SECRET;
});
afterAll(() => {
  delete process.env.MY_API_TOKEN;
});
beforeEach(() => {
  runtime = runtimeFor();
  service = new ShellService(createShellState(), { runtime: () => runtime, env: () => ({}), killGraceMs: 500 });
});
afterEach(async () => {
  await service.stopAll();
  await runtime.shutdown();
});

const BUILD = `i=1; while [ $i -le 2000 ]; do echo "[build] step $i/2000: compiled src/module_$i.ts in $(( (i * 37) % 90 + 3 )) ms"; i=$((i+1)); done; echo '__RESULT__ {"ok":true,"modules":2000}'`;
const PLANTED = `seq 1 20000 | awk '{ if ($1 == 10000) print "ERROR: disk quota exceeded"; else print "noise " $1 " value=" ($1 * 7919) % 1000 }'`;
const ERRORS = `seq 1 10000 | awk '{ printf "src/pkg_%d/file_%d.ts(%d,%d): error TS23%02d: Property p%d does not exist on type T%d.\\n", $1 % 97, ($1 * 7919) % 10007, ($1 * 31) % 400 + 1, ($1 * 17) % 80 + 1, $1 % 50, $1 % 1000, $1 % 100 }'; echo __FAILED__; exit 1`;
const errorLine = (n: number): string =>
  `src/pkg_${n % 97}/file_${(n * 7919) % 10007}.ts(${(n * 31) % 400 + 1},${(n * 17) % 80 + 1}): error TS23${String(n % 50).padStart(2, "0")}: Property p${n % 1000} does not exist on type T${n % 100}.`;
const buildLines = Array.from({ length: 2000 }, (_, k) => `[build] step ${k + 1}/2000: compiled src/module_${k + 1}.ts in ${((k + 1) * 37) % 90 + 3} ms`);

/** Runs `cmd` to its end in one exec_command (a long yield), as the model would. */
async function run(cmd: string, extra: Record<string, unknown> = {}) {
  const result = await service.exec({ cmd, yield_time_ms: 30_000, ...extra }, call());
  expect(result.status).toBe("exited");
  return result;
}

const shownLines = (output: string): string[] => output.split(/\r?\n/).filter((line) => line !== "" && !line.startsWith("⟪"));

describe.each([
  ["pipes", false],
  ["a PTY", true],
] as const)("a folded read over %s", (_name, tty) => {
  it("folds a 2,000-line build to a few lines, with its result line and last lines verbatim", async () => {
    const r = await run(BUILD, { tty });
    const lines = r.output.split(/\r?\n/).filter((line) => line !== "");
    expect(lines.at(-1)).toBe('__RESULT__ {"ok":true,"modules":2000}');
    expect(lines.slice(-10, -1)).toEqual(buildLines.slice(-9));
    // Every line shown verbatim is a whole line of the build: no read starts or ends inside one.
    for (const line of shownLines(r.output).slice(0, -1)) expect(buildLines).toContain(line);
    expect(r.output).toMatch(/^⟪~?×\d+⟫ \[build\] step \{\d+\.\.\d+\}\/2000: compiled src\/module_\{\d+\.\.\d+\}\.ts in \{~\d+\.\.\d+\} ms$/m);
    expect(r.output_folded_lines).toBeGreaterThan(100);
    expect(r.output.length).toBeLessThan(4_000);
    // The log keeps every byte the program wrote.
    expect(statSync(r.log_path!).size).toBe(r.output_bytes_total);
  });

  it("groups 10,000 errors of one shape: the first ones, how many more, the last ones and the failure line", async () => {
    const r = await run(ERRORS, { tty });
    const lines = r.output.split(/\r?\n/);
    for (const n of [1, 2, 3, 10_000]) expect(lines).toContain(errorLine(n));
    expect(lines.filter((line) => line !== "").at(-1)).toBe("__FAILED__");
    // The digest's group counts the omitted errors in one fold.
    expect(r.output).toMatch(/^⟪omitted \d+ lines/m);
    expect(r.output).toMatch(/^⟪~×\d{4}⟫ src\/pkg_\{~\d+\.\.\d+\}\/file_\{~\d+\.\.\d+\}\.ts\(.*\): error TS\{~23\d\d\.\.23\d\d\}: Property p\{~\d+\.\.\d+\} does not exist on type T\{~\d+\.\.\d+\}\.$/m);
    expect(r.output.length).toBeLessThan(4_000);
  });

  it("keeps an error printed in the middle of 20,000 noise lines, and says how much it left out", async () => {
    const r = await run(PLANTED, { tty });
    expect(r.output.split(/\r?\n/)).toContain("ERROR: disk quota exceeded");
    expect(r.output_omitted_bytes).toBeGreaterThan(100_000);
    expect(r.output).toMatch(/^⟪omitted \d+ lines \(\d+ bytes\) between head and tail/m);
    expect(r.output.length).toBeLessThan(8_000);
  });
});

describe("raw reads and redaction", () => {
  it("raw: true returns the head and tail as printed, cut on lines, with no digest", async () => {
    const r = await run(PLANTED, { raw: true });
    expect(r.output).not.toContain("ERROR: disk quota exceeded");
    expect(r.output).not.toContain("⟪");
    expect(r.output).toMatch(/\[… \d+ bytes omitted; the full output is in log_path …\]/);
    expect(r.output_folded_lines).toBe(0);
    const lines = r.output.split("\n").filter((line) => line !== "" && !line.startsWith("[…"));
    for (const line of lines) expect(line).toMatch(/^noise \d+ value=\d+$/);
    expect(readFileSync(r.log_path!, "utf8")).toContain("ERROR: disk quota exceeded");
  });

  it("a write_stdin after the job ended can still ask for its last read raw, or folded", async () => {
    for (const raw of [true, false]) {
      // The job prints nothing until the gate opens, after exec_command has answered: however slow the machine, its
      // whole output is still unread when it ends.
      const gate = join(mkdtempSync(join(tmpdir(), "fold-gate-")), "open");
      const started = await service.exec({ cmd: `while [ ! -e '${gate}' ]; do sleep 0.05; done; ${BUILD}`, yield_time_ms: 250 }, call());
      const id = started.session_id!;
      expect(started.output).toBe("");
      writeFileSync(gate, "");
      // Unread until it has ended: its last read is taken from the exit record, made before anyone asked for a form.
      // (A job still starting is not running either: wait for its exit itself.)
      await waitFor(() => service.list({}).sessions.some((s) => s.session_id === id && s.status === "exited"), 30_000, `job ${id} exited`);
      const r = await service.writeStdin({ session_id: id, yield_time_ms: 0, raw }, call());
      expect(r.status).toBe("exited");
      expect(r.output).toContain('__RESULT__ {"ok":true,"modules":2000}');
      if (raw) {
        expect(r.output).not.toContain("⟪");
        expect(r.output_folded_lines).toBe(0);
      } else {
        expect(r.output).toContain("⟪omitted");
        expect(r.output_folded_lines).toBeGreaterThan(100);
      }
    }
  });

  it("replaces a secret before folding: no fold or digest carries it", async () => {
    const r = await run(`i=1; while [ $i -le 3000 ]; do echo "step $i token=$MY_API_TOKEN"; i=$((i+1)); done`);
    expect(r.output).not.toContain(SECRET);
    expect(r.output).toContain(marker("MY_API_TOKEN"));
    expect(r.output).toMatch(/^⟪~?×\d+⟫ step \{\d+\.\.\d+\} token=/m);
    expect(r.redactions).toBeGreaterThan(0);
    expect(readFileSync(r.log_path!, "utf8")).toContain(SECRET);
  });
});
