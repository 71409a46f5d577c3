/**
 * `node bench/redact.ts`: the cost of redaction per MiB of text. Ordinary log text, log text with a secret every 4 KiB, and
 * adversarial texts built to make a backtracking pattern or a marker search go quadratic. Beside it, decoding the same
 * MiB from UTF-8 (what reading output as text costs anyway), and the cost of four times the text. Prints medians of 9 samples, in CPU time.
 */
import { performance } from "node:perf_hooks";
import { threadCpuUsage } from "node:process";
import { createRedactor } from "../actors/redact/redactor.ts";

const MIB = 1024 * 1024;
const env = {
  ...process.env,
  MY_API_TOKEN: "tok_3f9a8b7c6d5e4f3a2b1c",
  DATABASE_PASSWORD: "correct horse battery staple",
  GITHUB_TOKEN: "ghp_" + "Z".repeat(36),
};
const redactor = createRedactor(env);

function fill(unit: string, bytes = MIB): string {
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

const logLine = "2026-12-01T20:44:01.123Z INFO  server: GET /api/v1/items?page=3 200 12ms user=alice region=eu-west-1\n";
const cases: [string, string][] = [
  ["log text, no secret", fill(logLine)],
  ["log text, a secret every 4 KiB", fill(logLine.repeat(40) + `token=${env.MY_API_TOKEN} key=sk-ant-api03-${"x".repeat(40)}\n`)],
  ["adversarial: 'sk-' repeated", fill("sk-")],
  ["adversarial: 'eyJa.' repeated", fill("eyJabcdefghi.")],
  ["adversarial: one 1 MiB word", fill("a")],
  ["adversarial: 'PRIVATE KEY' repeated", fill("-----BEGIN PRIVATE KEY x\n")],
  ["adversarial: prefix of an env secret repeated", fill("tok_3f9a8b7c")],
  ["adversarial: 'x://a:' repeated", fill("x://a:")],
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/**
 * Median CPU milliseconds of this thread per run: far less disturbed than wall time by a busy machine. The kernel
 * accounts CPU time in ticks, so each sample times enough runs to last about 50 ms.
 */
function time(run: () => void): number {
  for (let i = 0; i < 3; i++) run();
  const probe = performance.now();
  run();
  const runs = Math.max(1, Math.ceil(50 / Math.max(0.01, performance.now() - probe)));
  const samples: number[] = [];
  for (let i = 0; i < 9; i++) {
    const start = threadCpuUsage();
    for (let r = 0; r < runs; r++) run();
    const used = threadCpuUsage(start);
    samples.push((used.user + used.system) / 1000 / runs);
  }
  return median(samples);
}

console.log(`environment values searched: ${Object.keys(env).length} variables\n`);
console.log("| text (1 MiB) | redact, ms | redact, both ends cut, ms | UTF-8 decode, ms | redact ÷ decode | 4 MiB ÷ 1 MiB | replacements |");
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const [label, text] of cases) {
  let count = 0;
  const redact = time(() => {
    count = redactor.redact(text).count;
  });
  const cut = time(() => void redactor.redact(text, { start: true, end: true }));
  const bytes = Buffer.from(text, "utf8");
  const decode = time(() => void bytes.toString("utf8"));
  // Linear time: four times the text costs four times as much.
  const four = text.repeat(4);
  const scaled = time(() => void redactor.redact(four));
  const row = [label, redact.toFixed(2), cut.toFixed(2), decode.toFixed(2), `${(redact / decode).toFixed(1)}×`, (scaled / redact).toFixed(1), count];
  console.log(`| ${row.join(" | ")} |`);
}
