import { describe, expect, it } from "vitest";
import { detectPrompt, visibleTail } from "../../actors/watch/prompt-detect.ts";

describe("detectPrompt", () => {
  it.each([
    "Password: ",
    "Password:",
    "[sudo] password for dev: ",
    "Enter passphrase for key '/home/dev/.ssh/id_ed25519': ",
    "Continue? ",
    "Overwrite existing file? [y/N] ",
    "Proceed (yes/no)? ",
    "Do you want to continue? [Y/n]",
    "Are you sure you want to continue connecting (yes/no/[fingerprint])? ",
    "Name: ",
    "> ",
    ">>> ",
    "$ ",
  ])("%j looks like a prompt", (tail) => {
    expect(detectPrompt(tail)).not.toBeNull();
  });

  it.each(["", "building", "Downloading 45%", "compiled 12 modules", "   ", "http://localhost:5173/", "a".repeat(5_000) + ": "])(
    "%j does not",
    (tail) => {
      expect(detectPrompt(tail)).toBeNull();
    },
  );

  it("looks through colours and carriage-return overwrites", () => {
    expect(detectPrompt("\x1b[1;32m?\x1b[0m Project name: \x1b[2m›\x1b[0m ")).not.toBeNull();
    expect(visibleTail("progress 10%\rprogress 90%\rPassword: ")).toBe("Password: ");
    expect(detectPrompt("Password: \r")).toBe("Password: ");
  });
});
