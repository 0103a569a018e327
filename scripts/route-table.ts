/**
 * `npm run docs:routes`: writes the route table (web/routes.ts) into docs/architecture.md#routes,
 * between its markers; web/routes.test.ts fails when the two differ.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { ROUTE_TABLE_END, ROUTE_TABLE_START, routeTableMarkdown } from "../web/route-table";

const path = new URL("../docs/architecture.md", import.meta.url);
const doc = readFileSync(path, "utf8");
const start = doc.indexOf(ROUTE_TABLE_START);
const end = doc.indexOf(ROUTE_TABLE_END);
if (start < 0 || end < start) throw new Error(`docs/architecture.md has no route table markers (${ROUTE_TABLE_START})`);
writeFileSync(path, `${doc.slice(0, start + ROUTE_TABLE_START.length)}\n\n${routeTableMarkdown()}\n\n${doc.slice(end)}`);
