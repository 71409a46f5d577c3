import { describe, expect, it } from "vitest";
import { countNewlines, createFramer, type FramedRecord } from "../../actors/output/framing.ts";

type Source = "stdout" | "stderr";

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const bytesOf = (...parts: (string | number[])[]): Uint8Array => {
  const pieces = parts.map((part) => (typeof part === "string" ? encode(part) : Uint8Array.from(part)));
  const out = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
};

/** Feeds `chunks` of one source, then EOF, and returns every record. */
function frame(chunks: Uint8Array[], maxRecordBytes = 1024): FramedRecord<Source>[] {
  const framer = createFramer<Source>({ maxRecordBytes });
  const records: FramedRecord<Source>[] = [];
  for (const chunk of chunks) records.push(...framer.push("stdout", chunk));
  records.push(...framer.end("stdout"));
  return records;
}

const texts = (records: { text: string }[]): string[] => records.map((record) => record.text);

/**
 * The obvious byte-at-a-time framing, as a reference: split on LF, CRLF and lone CR, decode each whole line, and cut
 * an over-limit line to its first bytes without a dangling incomplete sequence.
 */
function reference(input: Uint8Array, max: number): { text: string; bytes: number; overLimit: boolean }[] {
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const lines: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < input.length; i++) {
    if (input[i] === 0x0a || input[i] === 0x0d) {
      lines.push(input.subarray(start, i));
      if (input[i] === 0x0d && input[i + 1] === 0x0a) i++;
      start = i + 1;
    }
  }
  if (start < input.length) lines.push(input.subarray(start));
  return lines.map((line) => {
    if (line.length <= max) return { text: decoder.decode(line), bytes: line.length, overLimit: false };
    let cut = max;
    // Drop a sequence the limit split: walk back over continuation bytes to its lead byte.
    let lead = cut - 1;
    while (lead > cut - 4 && lead > 0 && ((line[lead] as number) & 0xc0) === 0x80) lead--;
    const byte = line[lead] as number;
    const needed = byte >= 0xf8 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (cut - lead < needed) cut = lead;
    return { text: decoder.decode(line.subarray(0, cut)), bytes: line.length, overLimit: true };
  });
}

/** Deterministic pseudo-random numbers, so a failure is reproducible. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function splitAt(input: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [0, ...cuts.filter((cut) => cut > 0 && cut < input.length).sort((a, b) => a - b), input.length];
  return points.slice(1).map((end, index) => input.slice(points[index], end));
}

describe("createFramer: terminators", () => {
  it("ends records on LF, CRLF and a lone CR, and emits the unterminated line at EOF", () => {
    const records = frame([encode("a\nb\r\nc\rd\n\ne")]);
    expect(texts(records)).toEqual(["a", "b", "c", "d", "", "e"]);
    expect(records.map((record) => record.bytes)).toEqual([1, 1, 1, 1, 0, 1]);
    expect(records.every((record) => record.source === "stdout" && !record.overLimit)).toBe(true);
  });

  it("treats CR at the end of one chunk and LF at the start of the next as one terminator", () => {
    expect(texts(frame([encode("one\r"), encode("\ntwo\n")]))).toEqual(["one", "two"]);
    // The same with the pair at the very start of a stream and with empty chunks in between.
    expect(texts(frame([encode("\r"), new Uint8Array(0), encode("\nx")]))).toEqual(["", "x"]);
  });

  it("emits a record for a CR that ends a chunk at once, without waiting for the next chunk", () => {
    const framer = createFramer<Source>({ maxRecordBytes: 100 });
    expect(texts(framer.push("stdout", encode("progress 10%\r")))).toEqual(["progress 10%"]);
    expect(texts(framer.push("stdout", encode("progress 20%\r")))).toEqual(["progress 20%"]);
    expect(texts(framer.push("stdout", encode("done\n")))).toEqual(["done"]);
    expect(framer.end("stdout")).toEqual([]);
  });

  it("keeps CR CR LF as an empty progress line between two records", () => {
    expect(texts(frame([encode("a\r\r\nb")]))).toEqual(["a", "", "b"]);
    expect(texts(frame([encode("a\r"), encode("\r"), encode("\nb")]))).toEqual(["a", "", "b"]);
  });

  it("frames every split of a mixed-terminator stream the same way", () => {
    const input = encode("alpha\r\nbeta\rgamma\n\r\n\rdelta\r");
    const expected = texts(reference(input, 1024));
    for (let cut = 0; cut <= input.length; cut++) {
      expect(texts(frame(splitAt(input, [cut])))).toEqual(expected);
    }
    // One byte per chunk.
    expect(texts(frame(splitAt(input, Array.from(input, (_, i) => i))))).toEqual(expected);
  });
});

describe("createFramer: UTF-8", () => {
  const samples = [
    ["2-byte", "é"],
    ["3-byte", "€"],
    ["4-byte", "😀"],
  ] as const;
  for (const [name, char] of samples) {
    it(`decodes a ${name} character split at every position`, () => {
      const input = encode(`x${char}y${char}\n${char}`);
      for (let cut = 1; cut < input.length; cut++) {
        const records = frame(splitAt(input, [cut]));
        expect(texts(records)).toEqual([`x${char}y${char}`, char]);
        expect(records.map((record) => record.bytes)).toEqual([2 + 2 * encode(char).length, encode(char).length]);
      }
      expect(texts(frame(splitAt(input, Array.from(input, (_, i) => i))))).toEqual([`x${char}y${char}`, char]);
    });
  }

  it("replaces invalid bytes with U+FFFD and counts them as bytes", () => {
    const records = frame([bytesOf("a", [0xff], "b", [0xc3], "\n", [0x80, 0x80], "c\n", [0xed, 0xa0, 0x80], "\n")]);
    expect(texts(records)).toEqual(["a\uFFFDb\uFFFD", "\uFFFD\uFFFDc", "\uFFFD\uFFFD\uFFFD"]);
    expect(records.map((record) => record.bytes)).toEqual([4, 3, 3]);
  });

  it("replaces a sequence cut short by a terminator, across a chunk boundary too", () => {
    expect(texts(frame([bytesOf("a", [0xe2, 0x82]), bytesOf("\nb")]))).toEqual(["a\uFFFD", "b"]);
    expect(texts(frame([bytesOf("a", [0xf0, 0x9f])]))).toEqual(["a\uFFFD"]);
  });

  it("keeps NUL bytes in the text", () => {
    const records = frame([bytesOf("a", [0], "b", [0, 0], "\n", [0], "é", [0])]);
    expect(texts(records)).toEqual(["a\0b\0\0", "\0é\0"]);
    expect(records.map((record) => record.bytes)).toEqual([5, 4]);
  });

  it("keeps a byte order mark that starts a line", () => {
    expect(texts(frame([bytesOf([0xef, 0xbb, 0xbf], "x\n", [0xef, 0xbb, 0xbf], "é\n")]))).toEqual([
      "\uFEFFx",
      "\uFEFFé",
    ]);
  });

  it("matches the byte-at-a-time reference on random text, chunkings and limits", () => {
    const next = random(0x5eed);
    const alphabet: (string | number[])[] = [
      ...["a", "Z", "0", " ", "\n", "\r", "\r\n", "é", "€", "😀"],
      ...[[0], [0xff], [0xc3], [0x80], [0xe2, 0x82], [0xf0, 0x9f, 0x98]],
    ];
    const pick = () => alphabet[Math.floor(next() * alphabet.length)] as string | number[];
    for (let round = 0; round < 300; round++) {
      const parts = Array.from({ length: 1 + Math.floor(next() * 120) }, pick);
      const input = bytesOf(...parts);
      const max = 1 + Math.floor(next() * 24);
      const cuts = Array.from({ length: Math.floor(next() * 8) }, () => Math.floor(next() * input.length));
      const records = frame(splitAt(input, cuts), max);
      expect(records.map(({ text, bytes, overLimit }) => ({ text, bytes, overLimit }))).toEqual(reference(input, max));
    }
  });
});

describe("createFramer: the record limit", () => {
  it("keeps the first maxRecordBytes of a long line, counts all of it and marks it overLimit", () => {
    const records = frame([encode(`${"x".repeat(25)}\nshort\n`)], 10);
    expect(records).toEqual([
      { source: "stdout", text: "x".repeat(10), bytes: 25, overLimit: true },
      { source: "stdout", text: "short", bytes: 5, overLimit: false },
    ]);
  });

  it("treats a line of exactly maxRecordBytes as within the limit", () => {
    expect(frame([encode("0123456789\n")], 10)).toEqual([
      { source: "stdout", text: "0123456789", bytes: 10, overLimit: false },
    ]);
  });

  it("cuts an over-limit line on a code-point boundary, in one chunk and across chunks", () => {
    const line = `ab${"€".repeat(5)}`; // 2 + 15 bytes; a limit of 6 falls inside the second €
    expect(frame([encode(`${line}\n`)], 6)).toEqual([{ source: "stdout", text: "ab€", bytes: 17, overLimit: true }]);
    const input = encode(`${line}\n`);
    for (let cut = 1; cut < input.length; cut++) {
      expect(texts(frame(splitAt(input, [cut]), 6))).toEqual(["ab€"]);
    }
  });

  it("reports overLimit in partial() as soon as the limit is exceeded", () => {
    const framer = createFramer<Source>({ maxRecordBytes: 8 });
    framer.push("stdout", encode("12345678"));
    expect(framer.partial("stdout")).toEqual({ text: "12345678", bytes: 8, overLimit: false });
    framer.push("stdout", encode("9"));
    expect(framer.partial("stdout")).toEqual({ text: "12345678", bytes: 9, overLimit: true });
    expect(framer.push("stdout", encode("0\n"))).toEqual([
      { source: "stdout", text: "12345678", bytes: 10, overLimit: true },
    ]);
    expect(framer.partial("stdout")).toBeNull();
  });

  it("holds at most maxRecordBytes of a 1 MiB line that never ends", () => {
    const max = 4096;
    const framer = createFramer<Source>({ maxRecordBytes: max });
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    for (let sent = 0; sent < 1024 * 1024; sent += chunk.length) expect(framer.push("stdout", chunk)).toEqual([]);
    const partial = framer.partial("stdout");
    expect(partial).toEqual({ text: "a".repeat(max), bytes: 1024 * 1024, overLimit: true });
    const [record] = framer.end("stdout");
    expect(record?.text.length).toBe(max);
    expect(record?.bytes).toBe(1024 * 1024);
    expect(record?.overLimit).toBe(true);
  });

  it("rejects a limit that is not a positive integer", () => {
    expect(() => createFramer({ maxRecordBytes: 0 })).toThrow(RangeError);
    expect(() => createFramer({ maxRecordBytes: 1.5 })).toThrow(RangeError);
  });
});

describe("createFramer: sources, end(), partial() and partialBytes()", () => {
  it("keeps a separate unterminated line per source", () => {
    const framer = createFramer<Source>({ maxRecordBytes: 100 });
    expect(framer.push("stdout", encode("out-a"))).toEqual([]);
    expect(framer.push("stderr", encode("err-a\nerr-"))).toEqual([
      { source: "stderr", text: "err-a", bytes: 5, overLimit: false },
    ]);
    expect(framer.push("stdout", encode("-b\r"))).toEqual([
      { source: "stdout", text: "out-a-b", bytes: 7, overLimit: false },
    ]);
    // stdout's pending CR must not swallow a LF that opens stderr's next chunk.
    expect(framer.push("stderr", encode("\nb"))).toEqual([
      { source: "stderr", text: "err-", bytes: 4, overLimit: false },
    ]);
    expect(framer.push("stdout", encode("\nnext\n"))).toEqual([
      { source: "stdout", text: "next", bytes: 4, overLimit: false },
    ]);
    expect(framer.end("stderr")).toEqual([{ source: "stderr", text: "b", bytes: 1, overLimit: false }]);
    expect(framer.end("stdout")).toEqual([]);
  });

  it("end() returns nothing without an unterminated line, and only once with one", () => {
    const framer = createFramer<Source>({ maxRecordBytes: 100 });
    expect(framer.end("stdout")).toEqual([]);
    framer.push("stdout", encode("done\n"));
    expect(framer.end("stdout")).toEqual([]);
    framer.push("stderr", encode("tail"));
    expect(framer.end("stderr")).toEqual([{ source: "stderr", text: "tail", bytes: 4, overLimit: false }]);
    expect(framer.end("stderr")).toEqual([]);
  });

  it("partial() shows the unterminated line without consuming it", () => {
    const framer = createFramer<Source>({ maxRecordBytes: 100 });
    expect(framer.partial("stdout")).toBeNull();
    framer.push("stdout", encode("first\nwaiting for in"));
    expect(framer.partial("stdout")).toEqual({ text: "waiting for in", bytes: 14, overLimit: false });
    expect(framer.partial("stdout")).toEqual({ text: "waiting for in", bytes: 14, overLimit: false });
    expect(framer.partial("stderr")).toBeNull();
    expect(framer.push("stdout", encode("put\n"))).toEqual([
      { source: "stdout", text: "waiting for input", bytes: 17, overLimit: false },
    ]);
    expect(framer.partial("stdout")).toBeNull();
  });

  it("partial() leaves out a multi-byte sequence that has not fully arrived", () => {
    const framer = createFramer<Source>({ maxRecordBytes: 100 });
    framer.push("stdout", bytesOf("price ", [0xe2, 0x82]));
    expect(framer.partial("stdout")).toEqual({ text: "price ", bytes: 8, overLimit: false });
    framer.push("stdout", bytesOf([0xac]));
    expect(framer.partial("stdout")).toEqual({ text: "price €", bytes: 9, overLimit: false });
  });

  it("partialBytes() counts the unterminated line across chunks and terminators, the bytes over the limit too", () => {
    const framer = createFramer<Source>({ maxRecordBytes: 4 });
    expect(framer.partialBytes("stdout")).toBe(0);
    framer.push("stdout", encode("done\nhalf"));
    expect(framer.partialBytes("stdout")).toBe(4);
    framer.push("stdout", encode(" a line"));
    expect(framer.partialBytes("stdout")).toBe(11);
    expect(framer.partialBytes("stderr")).toBe(0);
    // A lone CR ends a line; a LF right after it (in the next chunk) belongs to it and starts nothing.
    framer.push("stdout", encode("\r"));
    expect(framer.partialBytes("stdout")).toBe(0);
    framer.push("stdout", encode("\nab\rc"));
    expect(framer.partialBytes("stdout")).toBe(1);
    framer.end("stdout");
    expect(framer.partialBytes("stdout")).toBe(0);
  });
});

describe("createFramer: throughput", () => {
  it("frames 2,000,000 short lines (seq-like) in pipe-sized chunks", () => {
    const lines = 2_000_000;
    const input = encode(`${Array.from({ length: lines }, (_, i) => String(i + 1)).join("\n")}\n`);
    const framer = createFramer<Source>({ maxRecordBytes: 64 * 1024 });
    let count = 0;
    let last = "";
    for (let at = 0; at < input.length; at += 65536) {
      const records = framer.push("stdout", input.subarray(at, at + 65536));
      count += records.length;
      if (records.length > 0) last = (records[records.length - 1] as FramedRecord).text;
    }
    expect(count).toBe(lines);
    expect(last).toBe(String(lines));
    expect(framer.partial("stdout")).toBeNull();
  });
});

describe("countNewlines", () => {
  it("counts LF bytes only", () => {
    expect(countNewlines(new Uint8Array(0))).toBe(0);
    expect(countNewlines(encode("a\r\nb\rc\n\n"))).toBe(3);
    expect(countNewlines(encode("no newline"))).toBe(0);
  });

  it("agrees with a byte loop at every length and alignment", () => {
    const next = random(42);
    const backing = new Uint8Array(600);
    for (let i = 0; i < backing.length; i++) {
      const r = next();
      backing[i] = r < 0.3 ? 0x0a : r < 0.4 ? 0x0b : r < 0.5 ? 0x8a : r < 0.6 ? 0x00 : Math.floor(next() * 256);
    }
    for (let offset = 0; offset < 8; offset++) {
      for (let length = 0; length + offset <= backing.length; length += 7) {
        const view = backing.subarray(offset, offset + length);
        let expected = 0;
        for (const byte of view) if (byte === 0x0a) expected++;
        expect(countNewlines(view)).toBe(expected);
      }
    }
  });

  it("counts a large all-newline buffer exactly", () => {
    expect(countNewlines(new Uint8Array(1_000_003).fill(0x0a))).toBe(1_000_003);
  });
});
