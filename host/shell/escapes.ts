/**
 * C-style escapes in `write_stdin.chars`: models often cannot put raw control bytes in JSON reliably, so `\r`, `\x03`,
 * `\u0003` and friends written as text are turned into the bytes they name. Characters that arrive already decoded
 * (a JSON "\u0003") pass through unchanged, and so does a backslash that starts no known escape.
 */

export type EscapeDecode = { ok: true; bytes: Uint8Array } | { ok: false; error: string };

const SIMPLE: Readonly<Record<string, number>> = {
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  v: 0x0b,
  e: 0x1b,
  E: 0x1b,
  "\\": 0x5c,
  "'": 0x27,
  '"': 0x22,
  "?": 0x3f,
};

const encoder = new TextEncoder();

function isHex(ch: string | undefined): boolean {
  return ch !== undefined && /^[0-9a-fA-F]$/.test(ch);
}

function isOctal(ch: string | undefined): boolean {
  return ch !== undefined && ch >= "0" && ch <= "7";
}

/** Decodes `text` into bytes: `\xHH` is one raw byte, `\uHHHH`/`\u{H…}`/`\UHHHHHHHH` are UTF-8, `\NNN` is octal. */
export function decodeCEscapes(text: string): EscapeDecode {
  const out: number[] = [];
  let literalStart = 0;
  const flushLiteral = (end: number): void => {
    if (end > literalStart) for (const byte of encoder.encode(text.slice(literalStart, end))) out.push(byte);
  };
  let i = 0;
  while (i < text.length) {
    if (text[i] !== "\\") {
      i += 1;
      continue;
    }
    flushLiteral(i);
    const next = text[i + 1];
    if (next === undefined) {
      // A trailing backslash cannot start an escape; it is kept as typed.
      literalStart = i;
      break;
    }
    const simple = SIMPLE[next];
    if (simple !== undefined) {
      out.push(simple);
      i += 2;
    } else if (next === "x") {
      let j = i + 2;
      while (j < i + 4 && isHex(text[j])) j += 1;
      if (j === i + 2) return { ok: false, error: `chars has \\x without hex digits at offset ${i}` };
      out.push(Number.parseInt(text.slice(i + 2, j), 16));
      i = j;
    } else if (isOctal(next)) {
      let j = i + 1;
      while (j < i + 4 && isOctal(text[j])) j += 1;
      const value = Number.parseInt(text.slice(i + 1, j), 8);
      if (value > 0xff) return { ok: false, error: `chars has an octal escape above \\377 at offset ${i}` };
      out.push(value);
      i = j;
    } else if (next === "u" || next === "U") {
      let digits: string;
      let end: number;
      if (next === "u" && text[i + 2] === "{") {
        const close = text.indexOf("}", i + 3);
        digits = close === -1 ? "" : text.slice(i + 3, close);
        end = close + 1;
        if (close === -1 || digits.length === 0 || digits.length > 6 || ![...digits].every(isHex)) {
          return { ok: false, error: `chars has a malformed \\u{…} escape at offset ${i}` };
        }
      } else {
        const width = next === "u" ? 4 : 8;
        digits = text.slice(i + 2, i + 2 + width);
        end = i + 2 + width;
        if (digits.length !== width || ![...digits].every(isHex)) {
          return { ok: false, error: `chars has a malformed \\${next} escape at offset ${i} (needs ${width} hex digits)` };
        }
      }
      const code = Number.parseInt(digits, 16);
      if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
        return { ok: false, error: `chars has an escape for an invalid code point U+${digits.toUpperCase()} at offset ${i}` };
      }
      for (const byte of encoder.encode(String.fromCodePoint(code))) out.push(byte);
      i = end;
    } else {
      // Not an escape C knows (a Windows path, a regex `\d`): keep the backslash and the character as typed.
      literalStart = i;
      i += 2;
      continue;
    }
    literalStart = i;
  }
  flushLiteral(text.length);
  return { ok: true, bytes: Uint8Array.from(out) };
}
