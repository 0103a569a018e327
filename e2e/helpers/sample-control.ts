/**
 * Changes a site of a sample network started by a test, through its control host
 * (docs/decisions.md#the-sample-network): `POST` a change, or `DELETE` to put the site back.
 */
import { request as httpsRequest } from "node:https";
import type { SpawnedNetwork } from "../../test/network/spawn";

/** `POST` (a change) or `DELETE` (put back) `https://control.sample.test/sites/{domain}`; the status. */
export function changeSite(net: SpawnedNetwork, domain: string, change: object | null): Promise<number> {
  const port = Number(net.connectToOne.split(":").pop());
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        servername: "control.sample.test",
        ca: net.caPem,
        method: change ? "POST" : "DELETE",
        path: `/sites/${domain}`,
        headers: { host: "control.sample.test" },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(change ? JSON.stringify(change) : undefined);
  });
}

/**
 * The change most tests make: blog.alice.example's owner drops Alice from its ownership list, so
 * Alice's claim of the blog no longer verifies (`not_listed`).
 */
export const BLOG_DROPS_ALICE = {
  files: {
    "/ident-property.json": JSON.stringify({
      ident_property: {
        id: "§:property:blog.alice.example",
        name: "Workshop Notes",
        url: "https://blog.alice.example/",
        ownership: [{ network_id: "§:entity:someone-else.example" }],
      },
    }),
  },
};
