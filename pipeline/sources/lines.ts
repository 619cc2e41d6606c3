// A text file's lines as node:readline gives them (ends: \n, \r\n or a lone \r; no empty line after
// a final terminator), read in 4 MB pieces and handed to a callback: readline's events and async
// iteration per line cost more than the splitting itself (~0.1 s on the real source's 13 MB of
// fundamentals, on the path before any financials job can start).
import { createReadStream } from "node:fs";

const LF = 10;
const CR = 13;

export async function eachLine(path: string, onLine: (line: string) => void): Promise<void> {
  let carry = "";
  // A chunk ended in \r: a \n opening the next one belongs to that same line end.
  let skipLF = false;
  // Bytes after a piece's last line end wait for the next piece: decoded up to a line end, a
  // piece never splits a multi-byte character (\n and \r never occur inside one).
  let rest: Buffer | null = null;
  const pieces = async function* () {
    for await (const b of createReadStream(path, { highWaterMark: 1 << 22 })) {
      const buf: Buffer = rest ? Buffer.concat([rest, b as Buffer]) : (b as Buffer);
      // The last line end: a \r can only come after the last \n if it is searched from there
      // (a backward search for a \r that is not there would scan the whole piece).
      const lf = buf.lastIndexOf(LF);
      const cut = Math.max(lf, buf.indexOf(CR, Math.max(lf, 0)) >= 0 ? buf.lastIndexOf(CR) : -1) + 1;
      rest = cut < buf.length ? buf.subarray(cut) : null;
      if (cut > 0) yield buf.toString("utf8", 0, cut);
    }
    if (rest) yield rest.toString("utf8");
  };
  for await (const s of pieces()) {
    let i = skipLF && s.charCodeAt(0) === LF ? 1 : 0;
    skipLF = false;
    // Next \n and \r at or after i, each found once and reused until passed (no rescan per line).
    let lf = s.indexOf("\n", i);
    let cr = s.indexOf("\r", i);
    while (lf >= 0 || cr >= 0) {
      const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      onLine(carry ? carry + s.slice(i, end) : s.slice(i, end));
      carry = "";
      i = end + 1;
      if (s.charCodeAt(end) === CR) {
        if (i < s.length) {
          if (s.charCodeAt(i) === LF) i++;
        } else skipLF = true;
      }
      if (lf >= 0 && lf < i) lf = s.indexOf("\n", i);
      if (cr >= 0 && cr < i) cr = s.indexOf("\r", i);
    }
    carry += s.slice(i);
  }
  if (carry) onLine(carry);
}
