import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { boundHit } from "../../actors/monitor/contract.ts";
import type { DiagnosticLine } from "../../mailbox/monitor.ts";
import { redactMatch, redactTail } from "../../actors/redact/monitor.ts";
import { isSecretName, MIN_SECRET_LENGTH } from "../../actors/redact/env-secrets.ts";
import { createRedactor } from "../../actors/redact/redactor.ts";
import { marker } from "../../actors/redact/spans.ts";
import { redactionEnabled } from "../../host/config.ts";

const none = createRedactor({});

describe("token shapes", () => {
  const cases: [name: string, token: string][] = [
    ["github_token", `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`],
    ["github_token", `gho_${"x".repeat(36)}`],
    ["github_token", `ghs_${"9".repeat(36)}`],
    ["github_pat", `github_pat_11ABCDEFG0${"a".repeat(20)}_${"B".repeat(59)}`],
    ["gitlab_token", "glpat-xY3_abcdefghijKLMNOPQR"],
    ["anthropic_key", `sk-ant-api03-${"Ab3-_".repeat(18)}AA`],
    ["openai_key", `sk-proj-${"Zz9_-".repeat(20)}`],
    ["openai_key", `sk-svcacct-${"q".repeat(40)}`],
    ["sk_key", `sk-${"a1B2".repeat(12)}`],
    ["sk_key", `sk-or-v1-${"0f".repeat(32)}`],
    ["slack_token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"],
    ["slack_token", "xoxp-1234-5678-9012-abcdef0123"],
    ["aws_access_key_id", "AKIAIOSFODNN7EXAMPLE"],
    ["aws_access_key_id", "ASIAY34FZKBOKMUTVV7A"],
    ["google_api_key", `AIza${"S".repeat(20)}-_${"k".repeat(13)}`],
    ["stripe_key", `sk_live_${"4eC39HqLyjWDarjtT1zdp7dc".repeat(1)}`],
    ["stripe_key", `rk_test_${"a".repeat(30)}`],
    ["npm_token", `npm_${"N".repeat(36)}`],
    ["pypi_token", `pypi-AgEIcHlwaS5vcmc${"x".repeat(60)}`],
    ["jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
  ];

  it.each(cases)("%s: %s", (name, token) => {
    const result = none.redact(`before ${token} after`);
    expect(result).toEqual({ text: `before ${marker(name)} after`, count: 1 });
  });

  it("a bearer header keeps its scheme and loses its token", () => {
    expect(none.redact("> Authorization: Bearer abc.DEF-ghi_jkl~mno+pqr/stu==\n").text).toBe(
      `> Authorization: Bearer ${marker("bearer_token")}\n`,
    );
  });

  it("a URL keeps its user and host and loses its password", () => {
    expect(none.redact("connecting to postgres://app:s3cr3t!pw@db.internal:5432/app").text).toBe(
      `connecting to postgres://app:${marker("url_password")}@db.internal:5432/app`,
    );
    expect(none.redact("redis://:hunter22@cache:6379").text).toBe(`redis://:${marker("url_password")}@cache:6379`);
  });

  it("ordinary text with near misses is left alone", () => {
    const text = [
      "task-list-management-component-renderer-v2",
      "sk-learn is installed; ask-me-anything-about-the-project-today",
      "AKIAIOSFODNN7EXAMPLEXX is too long to be an access key id",
      "ghp_short and github_pat_short",
      "https://example.com:8080/path and git@github.com:org/repo.git",
      "the private key is in the vault; BEGIN PRIVATE KEY without dashes",
      "eyJhbGciOiJIUzI1NiJ9 is a header alone",
    ].join("\n");
    expect(none.redact(text)).toEqual({ text, count: 0 });
  });

  it("a token inside a longer word is not a token", () => {
    expect(none.redact(`xghp_${"a".repeat(36)}`).count).toBe(0);
  });
});

describe("PEM private key blocks", () => {
  const body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "aGVsbG8gd29ybGQgdGhpcyBpcyBub3QgYSByZWFsIGtleQ=="];
  const block = ["-----BEGIN RSA PRIVATE KEY-----", ...body, "-----END RSA PRIVATE KEY-----"];
  const masked = block.map(() => marker("private_key"));

  it("a whole block is one replacement, every line of it masked in place", () => {
    const result = none.redactLines(["before", ...block, "after"]);
    expect(result).toEqual({ lines: ["before", ...masked, "after"], count: 1 });
  });

  it("a block as one text keeps its line breaks", () => {
    const text = `key:\n${block.join("\n")}\nnext`;
    expect(none.redact(text)).toEqual({ text: `key:\n${masked.join("\n")}\nnext`, count: 1 });
  });

  it("a block cut before its END runs to the last line that can belong to it", () => {
    expect(none.redactLines([...block.slice(0, 3), "error: unexpected end"]).lines).toEqual([
      ...masked.slice(0, 3),
      "error: unexpected end",
    ]);
    expect(none.redact(block.slice(0, 2).join("\n") + "\nMIIEvQ", { end: true }).text).not.toContain("MII");
  });

  it("a block whose BEGIN was evicted takes the key lines before its END", () => {
    expect(none.redactLines(["make: ok", ...block.slice(1)])).toEqual({ lines: ["make: ok", ...masked.slice(1)], count: 1 });
  });

  it("a legacy encrypted key with headers, and an OpenSSH key", () => {
    const legacy = [
      "-----BEGIN RSA PRIVATE KEY-----",
      "Proc-Type: 4,ENCRYPTED",
      "DEK-Info: AES-128-CBC,3F17F5316E2BAC89",
      "",
      body[0] as string,
      "-----END RSA PRIVATE KEY-----",
    ];
    expect(none.redactLines(legacy).lines).toEqual(legacy.map((line) => (line === "" ? "" : marker("private_key"))));
    const openssh = ["-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU=", "-----END OPENSSH PRIVATE KEY-----"];
    expect(none.redactLines(openssh).count).toBe(1);
  });

  it("a key printed on one line with \\n escapes (in JSON) ends at its END marker", () => {
    const json = `{"key":"-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n","id":7}`;
    expect(none.redact(json).text).toBe(`{"key":"${marker("private_key")}\\n","id":7}`);
  });

  it("a public key or a certificate is not a secret", () => {
    const text = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----";
    expect(none.redact(text).count).toBe(0);
  });
});

describe("environment secrets", () => {
  const env = {
    MY_API_TOKEN: "tok_3f9a8b7c6d5e4f3a2b1c",
    DB_PASSWORD: "correct horse battery",
    SHORT_KEY: "abc1234",
    AWS_BEARER_TOKEN_BEDROCK: "bedrock-bearer-0123456789",
    PATH: "/usr/local/bin:/usr/bin",
    HOME_DIR_SECRET_LOOKING_VALUE: "tok_3f9a8b7c6d5e4f3a2b1c-not-named-secret",
  };
  const redactor = createRedactor(env);

  it("names that look secret, and the provider keys Pi reads", () => {
    const secret = ["GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "PGPASSWORD", "password"];
    secret.push("GOOGLE_APPLICATION_CREDENTIALS", "AWS_ACCESS_KEY_ID", "AWS_BEARER_TOKEN_BEDROCK", "CLIENT_SECRET", "GITLAB_PAT");
    for (const name of secret) {
      expect(isSecretName(name), name).toBe(true);
    }
    for (const name of ["PATH", "HOME", "TOKENIZER_PATH", "KEYBOARD", "ANTHROPIC_IDENTITY_TOKEN_FILE", "SECRETS_DIR"]) {
      expect(isSecretName(name), name).toBe(false);
    }
  });

  it("every credential variable in pi-ai's provider table is covered", () => {
    const source = readFileSync(new URL("../../node_modules/@earendil-works/pi-ai/dist/env-api-keys.js", import.meta.url), "utf8");
    const table = source.slice(source.indexOf("function getApiKeyEnvVars"), source.indexOf("export function findEnvKeys"));
    const names = [...table.matchAll(/"([A-Z][A-Z0-9_]+)"/g)].map((m) => m[1] as string);
    names.push("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK");
    expect(names.length).toBeGreaterThan(30);
    expect(names.filter((name) => !isSecretName(name))).toEqual([]);
  });

  it("a value is replaced by its variable's name wherever it appears", () => {
    expect(redactor.redact(`auth tok_3f9a8b7c6d5e4f3a2b1c ok; pw="correct horse battery"`)).toEqual({
      text: `auth ${marker("MY_API_TOKEN")} ok; pw="${marker("DB_PASSWORD")}"`,
      count: 2,
    });
    expect(redactor.redact("bedrock-bearer-0123456789").text).toBe(marker("AWS_BEARER_TOKEN_BEDROCK"));
  });

  it(`values shorter than ${MIN_SECRET_LENGTH} characters, and values of other names, are left alone`, () => {
    expect(redactor.redact("abc1234 /usr/local/bin:/usr/bin")).toEqual({ text: "abc1234 /usr/local/bin:/usr/bin", count: 0 });
  });

  it("a value inside a longer one is named after the longest, and the two never nest", () => {
    const overlapping = createRedactor({ API_TOKEN: "abcdefgh", NEW_API_TOKEN: "abcdefgh12345678", Z_KEY: "12345678zz" });
    expect(overlapping.redact("v2=abcdefgh12345678 v1=abcdefgh")).toEqual({
      text: `v2=${marker("NEW_API_TOKEN")} v1=${marker("API_TOKEN")}`,
      count: 2,
    });
    // Overlapping finds merge into one replacement named after the first to start.
    expect(overlapping.redact("abcdefgh12345678zz")).toEqual({ text: marker("NEW_API_TOKEN"), count: 1 });
  });

  it("a multi-line value is a secret line by line, and a JSON-escaped form is one too", () => {
    const multi = createRedactor({ SIGNING_KEY: "line-one-of-key\nline-two-of-key\nend", QUOTED_PASSWORD: 'pa"ss\\word' });
    expect(multi.redact("line-two-of-key").text).toBe(marker("SIGNING_KEY"));
    expect(multi.redact(`{"p":"pa\\"ss\\\\word"}`).text).toBe(`{"p":"${marker("QUOTED_PASSWORD")}"}`);
  });

  it("a partial secret at a cut edge is replaced once it is 8 characters or more", () => {
    expect(redactor.redact("head tok_3f9a8b7c", { end: true }).text).toBe(`head ${marker("MY_API_TOKEN")}`);
    expect(redactor.redact("head tok_3f9", { end: true }).text).toBe("head tok_3f9");
    expect(redactor.redact("6d5e4f3a2b1c tail", { start: true }).text).toBe(`${marker("MY_API_TOKEN")} tail`);
    expect(redactor.redact("9a8b7c6d5e", { start: true, end: true }).text).toBe(marker("MY_API_TOKEN"));
    // Not cut: the same text is ordinary.
    expect(redactor.redact("head tok_3f9a8b7c").count).toBe(0);
  });

  it("wherever a head or a tail cut falls, no 8 characters of the secret survive", () => {
    const secret = env.MY_API_TOKEN;
    const line = `export MY_API_TOKEN=${secret} # set by ci`;
    const all = Array.from({ length: secret.length - MIN_SECRET_LENGTH + 1 }, (_, i) => secret.slice(i, i + MIN_SECRET_LENGTH));
    const pieces = (text: string) => all.filter((piece) => text.includes(piece));
    for (let cut = 0; cut <= line.length; cut++) {
      const head = redactor.redact(line.slice(0, cut), { end: true }).text;
      const tail = redactor.redact(line.slice(cut), { start: true }).text;
      expect(pieces(head), `head cut at ${cut}: ${head}`).toEqual([]);
      expect(pieces(tail), `tail cut at ${cut}: ${tail}`).toEqual([]);
    }
  });

  it("a token cut short at the end loses what is left of its body", () => {
    expect(none.redact("clone with ghp_abc", { end: true }).text).toBe(`clone with ${marker("github_token")}`);
    expect(none.redact("Authorization: Bearer abc", { end: true }).text).toBe(`Authorization: Bearer ${marker("bearer_token")}`);
  });

  it("a secret that two output chunks split is found in the assembled line", () => {
    const chunks = ["export TOKEN=tok_3f9a8b", "7c6d5e4f3a2b1c\n"];
    // Each chunk alone holds only part of it; redaction runs on what the framer assembled.
    expect(chunks.map((chunk) => redactor.redact(chunk).count)).toEqual([0, 0]);
    expect(redactor.redact(chunks.join("")).text).toBe(`export TOKEN=${marker("MY_API_TOKEN")}\n`);
  });

  it("PI_JOBS_REDACT=0 turns redaction off; anything else leaves it on", () => {
    expect(redactionEnabled({ PI_JOBS_REDACT: "0" })).toBe(false);
    expect(redactionEnabled({})).toBe(true);
    expect(redactionEnabled({ PI_JOBS_REDACT: "1" })).toBe(true);
  });
});

describe("what a monitor outcome carries", () => {
  const redactor = createRedactor({ MY_API_TOKEN: "tok_3f9a8b7c6d5e4f3a2b1c" });

  it("a match's text and captures, counted, with the captures flagged", () => {
    const raw = { kind: "success" as const, text: "READY token=tok_3f9a8b7c6d5e4f3a2b1c", groups: { token: "tok_3f9a8b7c6d5e4f3a2b1c", state: "READY" } };
    const hit = boundHit("stdout", redactMatch(redactor, raw));
    expect(hit.matched).toBe(`READY token=${marker("MY_API_TOKEN")}`);
    expect(hit.captures).toEqual({ token: marker("MY_API_TOKEN"), state: "READY" });
    expect(hit.redaction).toEqual({ count: 2, captures: true });
  });

  it("a capture holding only part of a secret is still replaced", () => {
    const raw = { kind: "success" as const, text: "token=tok_3f9a8b7c6d5e4f3a2b1c", groups: { head: "tok_3f9a8b7c6d", middle: "9a8b7c6d5e4f" } };
    expect(redactMatch(redactor, raw).groups).toEqual({ head: marker("MY_API_TOKEN"), middle: marker("MY_API_TOKEN") });
  });

  it("a JSON capture containing a secret parses, with the marker in its string", () => {
    const json = `{"user":"ci","token":"tok_3f9a8b7c6d5e4f3a2b1c","nested":[{"k":"ghp_${"a".repeat(36)}"}]}`;
    const raw = { kind: "success" as const, text: `RESULT ${json}`, groups: { json } };
    const hit = boundHit("stdout", redactMatch(redactor, raw));
    expect(hit.json).toEqual({
      kind: "parsed",
      value: { user: "ci", token: marker("MY_API_TOKEN"), nested: [{ k: marker("github_token") }] },
    });
    expect(hit.captures.json).not.toContain("tok_3f9a8b7c");
    expect(hit.redaction).toEqual({ count: 4, captures: true });
  });

  it("a JSON capture hiding a secret behind escapes is caught once decoded", () => {
    const json = `{"token":"\\u0074ok_3f9a8b7c6d5e4f3a2b1c","tok_3f9a8b7c6d5e4f3a2b1c":1}`;
    const raw = { kind: "success" as const, text: json, groups: { json } };
    const match = redactMatch(redactor, raw);
    expect(match.groups?.json).toBe(`{"token":"${marker("MY_API_TOKEN")}","${marker("MY_API_TOKEN")}":1}`);
    expect(boundHit("stdout", match).json).toEqual({ kind: "parsed", value: { token: marker("MY_API_TOKEN"), [marker("MY_API_TOKEN")]: 1 } });
  });

  it("a match with nothing secret is returned as it was", () => {
    const raw = { kind: "success" as const, text: "READY", groups: null };
    expect(redactMatch(redactor, raw)).toBe(raw);
  });

  it("the tail keeps its entries, a clipped line being cut at its end", () => {
    const lines: DiagnosticLine[] = [
      { source: "stdout", text: "starting", count: 1, clipped: false },
      { source: "stderr", text: "auth failed for tok_3f9a8b7c6d5e4f3a2b1c", count: 3, clipped: false },
      { source: "stdout", text: `${"x".repeat(20)} tok_3f9a8b7c6d`, count: 1, clipped: true },
    ];
    const texts = ["starting", `auth failed for ${marker("MY_API_TOKEN")}`, `${"x".repeat(20)} ${marker("MY_API_TOKEN")}`];
    expect(redactTail(redactor, lines)).toEqual({ lines: lines.map((line, i) => ({ ...line, text: texts[i] })), count: 2 });
  });
});
