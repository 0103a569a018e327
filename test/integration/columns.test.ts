/**
 * The claims table's columns are written once (lib/store/columns.ts): the list the recorder and the
 * export build their statements from is the table's own, on both engines, in its order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "ident-resolver/store";
import { CLAIM_COLUMNS } from "ident-resolver/store";
import { useEngines } from "../helpers/engines";

const { engines: ENGINES } = useEngines("columns");

describe.each(ENGINES)("the claims table's columns on $name", ({ location }) => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(await location());
  });
  afterAll(() => store.close());
  it("are lib/store/columns.ts's, every one and no other, with their types", async () => {
    const rows = await store.db.query<{ column_name: string; data_type: string }>(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'claims' ORDER BY ordinal_position",
    );
    const type = (t: string) => ({ "timestamp with time zone": "timestamptz" })[t] ?? t;
    expect(rows.map((r) => [r.column_name, type(r.data_type)]).sort()).toEqual(CLAIM_COLUMNS.map(([c, t]) => [c, t]).sort());
  });
});
