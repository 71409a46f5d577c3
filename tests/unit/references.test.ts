/**
 * Every reference in the code and the documents resolves: a cited repository file exists, a cited section of a
 * document has that heading, and a cited invariant number is one of the invariants docs/architecture.md lists.
 * A reader who follows a reference must find what it names.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const self = relative(root, fileURLToPath(import.meta.url));
const SKIP = new Set(["node_modules", "dist", ".git"]);

function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(relative(root, path));
  }
  return out;
}

/** The files of a tree (paths relative to its root) and the text of those a reader follows references in. */
interface Tree {
  files: readonly string[];
  text: ReadonlyMap<string, string>;
}

/**
 * The comments of TypeScript source, everything else blanked (line breaks kept, so positions stay): a path in a
 * string literal is data (a workload, a fixture), not a reference.
 */
export function commentsOf(source: string): string {
  let out = "";
  let i = 0;
  const blank = (from: number, to: number): void => {
    out += source.slice(from, to).replace(/[^\n]/g, " ");
  };
  while (i < source.length) {
    const c = source[i] as string;
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      const end = source.indexOf("\n", i);
      const stop = end < 0 ? source.length : end;
      out += source.slice(i, stop);
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out += source.slice(i, stop);
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === "\\" ? 2 : 1;
      blank(i, Math.min(j + 1, source.length));
      i = j + 1;
    } else {
      blank(i, i + 1);
      i++;
    }
  }
  return out;
}

/** Where a reference stands, for the failure message. */
const at = (file: string, content: string, index: number): string => `${file}:${content.slice(0, index).split("\n").length}`;

/**
 * Paths that start with one of the tree's folders (or a bare document or module name) and do not resolve. A path
 * inside a longer one (a package specifier, an absolute path) is not the repository's.
 */
function danglingFiles(tree: Tree): string[] {
  const fileSet = new Set(tree.files);
  const basenames = new Set(tree.files.map((file) => file.slice(file.lastIndexOf("/") + 1)));
  const folders = new Set(tree.files.filter((file) => file.includes("/")).map((file) => file.slice(0, file.indexOf("/"))));
  const pathRef = /(?<![\w./@-])((?:[\w-]+\/)*[\w.-]+\.(?:ts|md|json))(?![\w/-])/g;
  const dangling: string[] = [];
  for (const [file, content] of tree.text) {
    for (const match of content.matchAll(pathRef)) {
      const ref = match[1] as string;
      const slash = ref.indexOf("/");
      let found: boolean;
      if (slash >= 0) {
        if (!folders.has(ref.slice(0, slash))) continue;
        // Relative to the repository, or (in a document) to the document's own folder.
        found = fileSet.has(ref) || (file.endsWith(".md") && fileSet.has(join(file, "..", ref)));
      } else if (ref.endsWith(".md") || /^[a-z]+(?:-[a-z]+)+\.ts$/.test(ref)) {
        // A bare document, or a bare module name (lowercase words joined by hyphens, as the repository names its
        // modules): some file of the tree has that name.
        found = basenames.has(ref);
      } else {
        continue;
      }
      if (!found) dangling.push(`${at(file, content, match.index)} ${ref}`);
    }
  }
  return dangling;
}

/** `decisions.md, "Heading"` anywhere, and `see "Heading"` inside a document (its own sections), without that heading. */
function danglingSections(tree: Tree): string[] {
  const headings = (doc: string): string[] =>
    (tree.text.get(doc) ?? "")
      .split("\n")
      .filter((line) => line.startsWith("#"))
      .map((line) => line.replace(/^#+\s*/, ""));
  const dangling: string[] = [];
  const check = (file: string, content: string, index: number, doc: string, title: string): void => {
    // A citation may wrap across lines (Markdown paragraphs and comments do); a heading never does.
    const wanted = title.replace(/\s+/g, " ");
    if (!headings(doc).some((heading) => heading.startsWith(wanted))) dangling.push(`${at(file, content, index)} ${doc} "${title}"`);
  };
  for (const [file, content] of tree.text) {
    for (const match of content.matchAll(/([\w-]+\.md),? "([^"]+)"/g)) {
      const doc = tree.files.find((candidate) => candidate === match[1] || candidate.endsWith(`/${match[1]}`));
      // A document that does not exist is reported by danglingFiles.
      if (doc !== undefined) check(file, content, match.index, doc, match[2] as string);
    }
    if (!file.endsWith(".md")) continue;
    for (const match of content.matchAll(/\bsee "([^"]+)"/g)) check(file, content, match.index, file, match[1] as string);
  }
  return dangling;
}

/** Citations of an invariant number that docs/architecture.md does not list ("1. **…**"). */
function danglingInvariants(tree: Tree): string[] {
  const listed = new Set(
    [...(tree.text.get("docs/architecture.md") ?? "").matchAll(/^(\d+)\. \*\*/gm)].map((match) => Number(match[1])),
  );
  const dangling: string[] = [];
  for (const [file, content] of tree.text) {
    for (const match of content.matchAll(/\binvariants? (\d+)/gi)) {
      if (!listed.has(Number(match[1]))) dangling.push(`${at(file, content, match.index)} invariant ${match[1]}`);
    }
  }
  return dangling;
}

const files = walk(root, []);
const repository: Tree = {
  files,
  text: new Map(
    files
      .filter((file) => /\.(ts|md)$/.test(file) && file !== self)
      .map((file) => {
        const content = readFileSync(join(root, file), "utf8");
        return [file, file.endsWith(".ts") ? commentsOf(content) : content];
      }),
  ),
};

describe("references in code and documents", () => {
  it("name repository files that exist", () => {
    expect(danglingFiles(repository)).toEqual([]);
  });

  it("cite sections that the named document has", () => {
    expect(danglingSections(repository)).toEqual([]);
  });

  it("cite invariants that docs/architecture.md lists", () => {
    expect(repository.text.get("docs/architecture.md")).toMatch(/^1\. \*\*/m);
    expect(danglingInvariants(repository)).toEqual([]);
  });

  it("read only the comments of source code", () => {
    const source = 'const a = "host/x.ts"; // host/y.ts\nconst b = `tests/z.ts`; /* docs/w.md */ const c = \'a\\\'b\';';
    const comments = commentsOf(source);
    expect(comments).toHaveLength(source.length);
    expect(comments.split(/\s+/).filter(Boolean)).toEqual(["//", "host/y.ts", "/*", "docs/w.md", "*/"]);
  });

  it("report each kind of dangling reference, with where it stands", () => {
    const tree: Tree = {
      files: ["actors/job/actor.ts", "host/runtime/job.ts", "docs/architecture.md", "docs/decisions.md"],
      text: new Map([
        ["docs/architecture.md", "# Architecture\n1. **One.**\n## Invariants\n"],
        ["docs/decisions.md", "# Decisions\n## Real heading\nsee \"Real heading\", see \"Gone heading\"\n"],
        [
          "actors/job/actor.ts",
          [
            "// actors/job/actor.ts, decisions.md and `actors/job/actor.ts` resolve; node:fs/x.ts and @scope/pkg/y.ts are not ours",
            "// host/missing.ts, notes.md and old-module.ts do not",
            '// (decisions.md, "Real heading") resolves, (architecture.md, "Shape") does not',
            "// architecture invariant 1 holds; invariant 8 does not",
          ].join("\n"),
        ],
      ]),
    };
    expect(danglingFiles(tree)).toEqual([
      "actors/job/actor.ts:2 host/missing.ts",
      "actors/job/actor.ts:2 notes.md",
      "actors/job/actor.ts:2 old-module.ts",
    ]);
    expect(danglingSections(tree)).toEqual(['docs/decisions.md:3 docs/decisions.md "Gone heading"', 'actors/job/actor.ts:3 docs/architecture.md "Shape"']);
    expect(danglingInvariants(tree)).toEqual(["actors/job/actor.ts:4 invariant 8"]);
  });
});
