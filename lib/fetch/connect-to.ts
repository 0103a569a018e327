/**
 * `IDENT_CONNECT_TO` (docs/decisions.md#connect-to): comma-separated `HOST:PORT:CONNECT_HOST:CONNECT_PORT` entries with
 * curl's `--connect-to` meaning. An empty HOST or PORT matches any; an empty CONNECT_HOST or
 * CONNECT_PORT keeps the original. IPv6 hosts are written in brackets.
 */
export type ConnectToEntry = { host: string; port: number | null; connectHost: string; connectPort: number | null };

export type ConnectToParse = { ok: true; entries: ConnectToEntry[] } | { ok: false; message: string };

const ENTRY_RE = /^(\[[^\]]*\]|[^:[\]]*):(\d*):(\[[^\]]*\]|[^:[\]]*):(\d*)$/;

function port(text: string): number | null | undefined {
  if (text === "") return null;
  const n = Number(text);
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? n : undefined;
}

function unbracket(host: string): string {
  return host.startsWith("[") ? host.slice(1, -1) : host;
}

export function parseConnectTo(value: string): ConnectToParse {
  const entries: ConnectToEntry[] = [];
  for (const raw of value.split(",")) {
    const text = raw.trim();
    if (text === "") continue;
    const m = ENTRY_RE.exec(text);
    const p = m ? port(m[2] ?? "") : undefined;
    const cp = m ? port(m[4] ?? "") : undefined;
    if (!m || p === undefined || cp === undefined) {
      return { ok: false, message: `"${text}" is not HOST:PORT:CONNECT_HOST:CONNECT_PORT` };
    }
    entries.push({
      host: unbracket(m[1] ?? "").toLowerCase(),
      port: p,
      connectHost: unbracket(m[3] ?? ""),
      connectPort: cp,
    });
  }
  return { ok: true, entries };
}

/**
 * Where to dial instead of `host:port`, from the first matching entry, or null for none. `host` is
 * null when the entry keeps the original host: that name is still resolved (and so guarded).
 */
export function matchConnectTo(
  entries: readonly ConnectToEntry[],
  host: string,
  portNumber: number,
): { host: string | null; port: number } | null {
  const h = host.toLowerCase();
  for (const e of entries) {
    if ((e.host === "" || e.host === h) && (e.port === null || e.port === portNumber)) {
      return { host: e.connectHost === "" ? null : e.connectHost, port: e.connectPort ?? portNumber };
    }
  }
  return null;
}
