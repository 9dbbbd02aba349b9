/**
 * A batch body (`{"records": [ … ]}`) parsed record by record. JSON.parse of a 4 MiB body is
 * one synchronous call of a few hundred milliseconds (more on a loaded core), during which the
 * server answers nobody (TRUST.md: health under a second throughout). Parsed piece by piece,
 * with a turn for others between pieces, the longest block is one record's parse.
 *
 * The result is JSON.parse's, always: the pieces are the text of the top-level "records"
 * array's elements and the text around the array (with `[]` in its place); when any of them
 * fails to parse, or there is nothing to split, the whole text goes to JSON.parse, which
 * returns the value or throws its own error.
 */

/** Where the elements of the top-level "records" array lie: [start, end) of each, and of the array. */
export type RecordsSplit = { arrayStart: number; arrayEnd: number; elements: [number, number][] };

/** The end (index after the closing quote) of the string starting at `i`, or -1 if unterminated. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x5c /* \ */) j++;
    else if (c === 0x22 /* " */) return j + 1;
  }
  return -1;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * The top-level "records" array of an object body, split at its own commas; null when the body
 * is no object, has no such key (spelt plainly), its value is no array, a string never ends, or
 * the array has more than `maxPieces` elements (a batch that large is refused whole anyway, and
 * one parse of many tiny elements is quicker than many parses).
 */
export function splitRecordsArray(text: string, maxPieces = 1000): RecordsSplit | null {
  let i = 0;
  const n = text.length;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x7b /* { */) return null;
  let depth = 0;
  let expectKey = false;
  let keyIsRecords = false;
  let split: RecordsSplit | null = null;
  let elementStart = -1;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (end < 0) return null;
      if (depth === 1 && expectKey) {
        keyIsRecords = end - i === 9 && text.startsWith('"records"', i);
        expectKey = false;
      }
      i = end - 1;
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth === 1) expectKey = true;
      else if (depth === 2 && c === 0x5b && keyIsRecords && !split) {
        split = { arrayStart: i, arrayEnd: -1, elements: [] };
        elementStart = i + 1;
      }
    } else if (c === 0x7d || c === 0x5d) {
      if (depth === 2 && split && split.arrayEnd < 0) {
        split.arrayEnd = i + 1;
        if (split.elements.length || text.slice(elementStart, i).trim()) split.elements.push([elementStart, i]);
      }
      depth--;
      if (depth === 0) break;
    } else if (c === 0x2c /* , */) {
      if (depth === 1) {
        expectKey = true;
        keyIsRecords = false;
      } else if (depth === 2 && split && split.arrayEnd < 0) {
        split.elements.push([elementStart, i]);
        if (split.elements.length >= maxPieces) return null;
        elementStart = i + 1;
      }
    } else if (depth === 1 && c !== 0x3a /* : */ && !isSpace(c)) {
      // A plain value (number, true, …) at the top level ends any pending key; after the
      // colon, keyIsRecords stays set for the value that follows.
      keyIsRecords = false;
    }
  }
  return split && split.arrayEnd > 0 ? split : null;
}

/**
 * JSON.parse(text), in pieces where the body is a batch: `between` runs after each record's
 * parse (a turn of the event loop, in the server).
 */
export async function parseRecordsInPieces(text: string, between: () => Promise<void>, maxPieces = 1000): Promise<unknown> {
  const split = splitRecordsArray(text, maxPieces);
  if (!split) return JSON.parse(text);
  try {
    const records: unknown[] = [];
    for (const [start, end] of split.elements) {
      records.push(JSON.parse(text.slice(start, end)));
      await between();
    }
    const rest = JSON.parse(`${text.slice(0, split.arrayStart)}[]${text.slice(split.arrayEnd)}`) as Record<string, unknown>;
    if (!Array.isArray(rest.records) || rest.records.length) return JSON.parse(text);
    rest.records = records;
    return rest;
  } catch {
    // JSON.parse's own answer: its error names what is wrong and where, in the whole body.
    return JSON.parse(text);
  }
}
