/**
 * `ident store export [FILE]` and `ident store import FILE [--merge]` (docs/deploying.md#moving-the-index):
 * the configured store's whole index as NDJSON, and back, streamed both ways. An import checks each
 * line as it reads it and writes the file in one transaction: all of it, or nothing.
 */
import { createReadStream, createWriteStream, existsSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import { once } from "node:events";
import { constants } from "node:os";
import type { Writable } from "node:stream";
import v8 from "node:v8";
import { HEAP_GROWING_FLAG } from "../scripts/server-flags.js";
import { configErrorMessage, parseConfig } from "ident-resolver/setup";
import { openStore, type Store } from "ident-resolver/store";
import { interruptible } from "ident-resolver/store";
import { exportIndex, ImportError, importIndex, StoreNotEmpty, type NumberedLine, type Progress } from "ident-resolver/store";
import type { Io } from "./io";

const thousands = (n: number) => n.toLocaleString("en-US");

/**
 * The longest line an import reads: an entity with every claim the resolver checks and years of
 * changes is far shorter; a file that is not an export (one line of a dump) is refused by its number
 * before it fills memory.
 */
const MAX_LINE_CHARS = 64 * 1024 * 1024;

/**
 * The text of `file`, a megabyte at a time. `signal` aborted, it ends at once with its reason, even
 * while a pipe gives nothing: the import rolls back then. (The read itself cannot be called back: the
 * process ends once the pipe's writer writes or goes, as Ctrl-C ends a pipeline's, or at a second signal.)
 */
async function* chunksOf(file: string, signal?: AbortSignal): AsyncGenerator<string> {
  const stream = createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 });
  const chunks: AsyncIterator<string> = stream[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await orAborted(chunks.next(), signal);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    stream.destroy();
  }
}

/**
 * `promise`, or `signal`'s reason as soon as it aborts. A promise of its own each time, its listener
 * removed once settled: a race with one promise that stays pending (the abort) leaves a reaction on it
 * each time, holding what the race settled with; each chunk of the file, the whole file by the end
 * (2.5 GB for 1,000,000 entities, docs/deploying.md#how-fast-and-how-much-memory).
 */
function orAborted<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/**
 * The lines of `file`, numbered from 1; a carriage return before a newline is not part of the line.
 * `signal` aborted, the reading ends with its reason.
 */
export async function* linesOf(file: string, maxChars = MAX_LINE_CHARS, signal?: AbortSignal): AsyncGenerator<NumberedLine> {
  let n = 0;
  let rest = "";
  const line = (text: string): NumberedLine => ({ n: ++n, text: text.endsWith("\r") ? text.slice(0, -1) : text });
  // Split here, not by readline: a line past maxChars is refused before it is held whole.
  for await (const chunk of chunksOf(file, signal)) {
    const text = rest === "" ? chunk : rest + chunk;
    let start = 0;
    for (let eol = text.indexOf("\n"); eol >= 0; eol = text.indexOf("\n", start)) {
      if (eol - start > maxChars) break;
      yield line(text.slice(start, eol));
      start = eol + 1;
    }
    rest = text.slice(start);
    if (rest.length > maxChars) throw new ImportError(n + 1, `a line longer than ${thousands(maxChars)} characters: not an export`);
  }
  if (rest !== "") yield line(rest);
}

/** Progress on a terminal: one line rewritten at most four times a second, for `verb` (exported, imported). */
function progressLine(io: Io, verb: string): { progress: Progress; end(): void } {
  if (!io.progress) return { progress: () => undefined, end: () => undefined };
  const started = Date.now();
  let shown = 0;
  let wrote = false;
  return {
    progress: (done, total) => {
      const now = Date.now();
      if (now - shown < 250) return;
      shown = now;
      wrote = true;
      const rate = done.entities / Math.max(0.001, (now - started) / 1000);
      io.err(
        `\r${verb} ${thousands(done.entities)} of ${thousands(total.entities)} entities, ${thousands(done.jobs)} of ${thousands(total.jobs)} jobs (${thousands(Math.round(rate))} entities/s)   `,
      );
    },
    end: () => {
      if (wrote) io.err("\n");
    },
  };
}

const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * Ctrl-C, `kill` or a closed terminal while a command holds the store (docs/deploying.md#moving-the-index):
 * the first aborts `signal`, so the command's transaction rolls back at its next statement and the
 * store is closed as usual; a second ends the process at once (what an import wrote is then removed
 * when the store is opened next). `by` is the first signal, for the exit status (128 + its number).
 */
function stopSignals(): { signal: AbortSignal; by(): StopSignal | null; off(): void } {
  const controller = new AbortController();
  let by: StopSignal | null = null;
  const stop = (signal: StopSignal) => {
    if (by) process.exit(128 + constants.signals[signal]);
    by = signal;
    controller.abort(new Error(`interrupted (${signal})`));
  };
  for (const s of STOP_SIGNALS) process.on(s, stop);
  return {
    signal: controller.signal,
    by: () => by,
    off: () => {
      for (const s of STOP_SIGNALS) process.off(s, stop);
    },
  };
}

/** Writes to `stream`, waiting while it is full. */
function writerTo(stream: Writable): (text: string) => Promise<void> {
  return async (text) => {
    if (!stream.write(text)) await once(stream, "drain");
  };
}

/** The configured store, opened; or the exit status after saying why not in one line. */
async function open(env: Readonly<Record<string, string | undefined>>, io: Io, forImport: boolean): Promise<Store | number> {
  const config = parseConfig(env);
  if (!config.ok) {
    io.err(`${configErrorMessage(config.errors)}\n`);
    return 2;
  }
  const where = config.config.store;
  if (where.kind === "embedded" && where.dataDir === null) {
    io.err("ident: IDENT_DATA_DIR is :memory:, which nothing outlives; name a folder or set IDENT_DATABASE_URL\n");
    return 2;
  }
  if (!forImport && where.kind === "embedded" && where.dataDir && !existsSync(where.dataDir)) {
    io.err(`ident: there is no index in ${where.dataDir} to export\n`);
    return 1;
  }
  try {
    return await openStore(where);
  } catch (err) {
    // The running app holds the embedded store: stop it first (docs/deploying.md#moving-the-index).
    io.err(`ident: the store cannot be opened: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/**
 * Where an export to `file` goes. A regular file (or none yet) is written beside it and renamed when
 * whole, so a file of that name is never a part of one; a symbolic link is followed, so the file it
 * names is replaced, not the link. A device or a pipe (`/dev/stdout`, a FIFO) is written to as it is:
 * renaming over it would put a regular file in its place.
 */
function exportTarget(file: string): { path: string; partial: string | null } | { refused: string } {
  let stat;
  try {
    stat = statSync(file);
  } catch {
    return { path: file, partial: `${file}.partial` };
  }
  if (stat.isDirectory()) return { refused: `${file} is a folder: name a file to export to` };
  if (!stat.isFile()) return { path: file, partial: null };
  const real = realpathSync(file);
  return { path: real, partial: `${real}.partial` };
}

export async function storeExport(file: string | null, env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  const target = file === null ? null : exportTarget(file);
  if (target && "refused" in target) {
    io.err(`ident: ${target.refused}\n`);
    return 1;
  }
  const store = await open(env, io, false);
  if (typeof store === "number") return store;
  const partial = target?.partial ?? null;
  const stream: Writable | null = target ? createWriteStream(partial ?? target.path) : (io.stdout ?? null);
  const write = stream ? writerTo(stream) : (text: string) => io.out(text);
  const shown = progressLine(io, "exported");
  const started = Date.now();
  try {
    const counts = await exportIndex(store.db, write, shown.progress);
    shown.end();
    if (target && stream) {
      stream.end();
      await once(stream, "finish");
      if (partial) renameSync(partial, target.path);
    }
    const s = (Date.now() - started) / 1000;
    io.err(
      `ident: exported ${thousands(counts.entities)} entities (${thousands(counts.claims)} claims, ${thousands(counts.changes)} changes) and ` +
        `${thousands(counts.jobs)} jobs in ${s.toFixed(1)} s${file ? ` to ${file}` : ""}\n`,
    );
    return 0;
  } catch (err) {
    shown.end();
    if (partial) rmSync(partial, { force: true });
    io.err(`ident: the export failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await store.close();
  }
}

export async function storeImport(
  file: string,
  merge: boolean,
  env: Readonly<Record<string, string | undefined>>,
  io: Io,
): Promise<number> {
  if (!existsSync(file)) {
    io.err(`ident: there is no file ${file} to import\n`);
    return 1;
  }
  // docs/deploying.md#how-fast-and-how-much-memory: each batch's rows outlive a few young-generation
  // collections and die old; grown by 20 % at a time, the heap stays near what is live.
  v8.setFlagsFromString(HEAP_GROWING_FLAG);
  const stop = stopSignals();
  const store = await open(env, io, true);
  if (typeof store === "number") {
    stop.off();
    return store;
  }
  const started = Date.now();
  const shown = progressLine(io, "imported");
  try {
    // A store that holds entities is refused by importIndex (StoreNotEmpty), unless merging. Each line is checked as it is read; a bad one rolls back the one transaction: nothing is written.
    const lines = linesOf(file, MAX_LINE_CHARS, stop.signal);
    const done = await importIndex(interruptible(store.db, stop.signal), lines, { merge, progress: shown.progress });
    shown.end();
    const s = (Date.now() - started) / 1000;
    const kept = done.kept > 0 ? `; ${thousands(done.kept)} the store had checked as late or later were kept as they were` : "";
    io.err(
      `ident: imported ${thousands(done.entities)} entities (${thousands(done.claims)} claims, ${thousands(done.changes)} changes) and ` +
        `${thousands(done.jobs)} jobs in ${s.toFixed(1)} s (${thousands(Math.round(done.entities / Math.max(0.001, s)))} entities/s)${kept}\n`,
    );
    return 0;
  } catch (err) {
    shown.end();
    const by = stop.by();
    if (by) io.err(`ident: interrupted (${by}): the import was rolled back, and nothing was imported\n`);
    else if (err instanceof ImportError) io.err(`ident: ${file} ${err.message}; nothing was imported\n`);
    else if (err instanceof StoreNotEmpty) io.err(`ident: ${err.message}; nothing was imported\n`);
    else io.err(`ident: the import failed, and nothing was imported: ${err instanceof Error ? err.message : String(err)}\n`);
    return by ? 128 + constants.signals[by] : 1;
  } finally {
    await store.close();
    stop.off();
  }
}
