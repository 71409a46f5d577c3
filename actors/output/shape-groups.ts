/**
 * Many error lines of one shape, grouped: the first few of each shape stay verbatim, the rest are counted with what
 * their numbers did, and the last of them is kept. 10,000 `file_N.ts(L,C): error TS2339: …` lines reach the model as
 * three of them, one fold that says how many more and over which ranges, and the last one; every distinct shape keeps
 * at least one verbatim line, so grouping never hides a kind of error. Pure, and linear in the lines it is given.
 *
 * The caller keeps the verbatim lines in its own order and places a group where its first counted line came;
 * `lines(group)` writes it in the fold format of shared/fold.ts: `⟪×N⟫ template` (or `⟪~×N⟫` when the numbers did
 * not count evenly, or the lines were not one run), then the last line verbatim.
 */
import { EVIDENCE_HEAD, verbatimLine } from "../../shared/fold.ts";
import { addValues, firstSlots, readShape, shape, templateLine, type Slot } from "./line-shape.ts";

/** Lines of one shape kept verbatim before the rest are counted: as many as a folded run of evidence keeps. */
export const GROUP_VERBATIM = EVIDENCE_HEAD;
/** Shapes remembered; lines of further shapes are all kept verbatim (the caller's own budget bounds them). */
const MAX_SHAPES = 256;

export interface ShapeGroup {
  /** Lines counted in the group, the last one included. */
  count: number;
  /** The first counted line: the template's text. */
  readonly example: string;
  /** The newest counted line, shown verbatim after the fold. */
  last: string;
  /** What the numbers of the counted lines but the last did. */
  slots: Slot[] | null;
  /** Times a counted line followed a line of another shape: 1 means the counted lines were one run. */
  runs: number;
}

interface Shape {
  /** Lines of the shape seen so far. */
  seen: number;
  group: ShapeGroup | null;
}

export class ShapeGroups {
  private readonly verbatim: number;
  private readonly shapes = new Map<number, Shape>();
  private previous = -1;

  constructor(verbatim = GROUP_VERBATIM) {
    this.verbatim = verbatim;
  }

  /**
   * One line, in order. Null: keep it verbatim. A group: the line was counted in it; a group whose `count` is 1 is
   * new, and the caller places it where this line came.
   */
  add(text: string): ShapeGroup | null {
    readShape(text);
    const key = shape.key;
    const after = this.previous;
    this.previous = key;
    let known = this.shapes.get(key);
    if (known === undefined) {
      if (this.shapes.size >= MAX_SHAPES) return null;
      known = { seen: 0, group: null };
      this.shapes.set(key, known);
    }
    known.seen += 1;
    if (known.seen <= this.verbatim) return null;
    const group = known.group;
    if (group === null) {
      known.group = { count: 1, example: text, last: text, slots: null, runs: 1 };
      return known.group;
    }
    // The line held as the last one becomes one of the folded lines; this one is held instead.
    this.fold(group);
    readShape(text);
    group.last = text;
    group.count += 1;
    if (after !== key) group.runs += 1;
    return group;
  }

  /** The group as it is written: the fold of all its lines but the last (when there are any), then the last. */
  lines(group: ShapeGroup): string[] {
    if (group.count === 1 || group.slots === null) return [verbatimLine(group.last)];
    const fold = templateLine(group.example, false, group.count - 1, group.runs === 1, group.slots);
    return [fold, verbatimLine(group.last)];
  }

  /** Adds the held last line's numbers to the group's slots. */
  private fold(group: ShapeGroup): void {
    readShape(group.last);
    if (group.slots === null) group.slots = firstSlots();
    else addValues(group.slots);
  }
}
