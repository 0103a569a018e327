import { Suspense } from "react";
import { app } from "@/web/app";
import type { Claim } from "ident-resolver";
import { clipName } from "ident-resolver/present";
import type { ClaimSlot } from "ident-resolver";
import { claimView, type ClaimKind } from "ident-resolver/present";
import { ClaimCard, ClaimList, ClaimSkeleton } from "./claim-card";
import { FAILED, orFailure } from "@/web/settle";
import { StreamFailure } from "./stream-failure";

const TITLES: Record<ClaimKind, string> = { property: "Properties", credential: "Credentials", connection: "Connections" };

type Slot = { id: string | null; claim: Promise<Claim> | Claim };

/** Renders the claim in the list it belongs to once it settles; nothing in the other list. */
async function Settled({ slot, kind, want }: { slot: Slot; kind: ClaimKind; want: boolean }) {
  const claim = await orFailure(slot.claim, "a claim's check", app().log.error);
  // A failed check is said once, among the claims that did not verify.
  if (claim === FAILED) return want ? null : <StreamFailure what="The check of" claim={clipName(slot.id ?? "(no id)")} />;
  return claim.verified === want ? <ClaimCard view={claimView(kind, claim, app().config)} /> : null;
}

/** Shows a placeholder until the claim settles, then nothing: the card appears in its own list. */
async function Pending({ slot }: { slot: Slot }) {
  await Promise.resolve(slot.claim).catch(() => undefined);
  return null;
}

/**
 * A claim group: verified claims, then unverified ones set apart, each claim streaming in on its own
 * (one slow publisher holds only its own card).
 */
export function ClaimGroup({ kind, slots, headingLevel = 3 }: { kind: ClaimKind; slots: Slot[]; headingLevel?: 2 | 3 }) {
  if (slots.length === 0) return null;
  const H = headingLevel === 2 ? "h2" : "h3";
  const SubH = headingLevel === 2 ? "h3" : "h4";
  const id = (slot: Slot, i: number) => `${kind}-${i}-${slot.id ?? ""}`;
  const settled = slots.flatMap((s) => (s.claim instanceof Promise ? [] : [s.claim]));
  if (settled.length === slots.length) {
    // Everything is known (a warm cache, or a finished query): plain lists, no streaming machinery.
    const list = (verified: boolean) => (
      <ClaimList kind={kind} views={settled.filter((c) => c.verified === verified).map((c) => claimView(kind, c, app().config))} />
    );
    return (
      <section className="claim-group" aria-label={TITLES[kind]} data-testid={`group-${kind}`}>
        <H>{TITLES[kind]}</H>
        {list(true)}
        <div className="unverified" data-testid={`unverified-${kind}`}>
          <SubH className="unverified-title">Not verified</SubH>
          {list(false)}
        </div>
      </section>
    );
  }
  return (
    <section className="claim-group" aria-label={TITLES[kind]} data-testid={`group-${kind}`}>
      <H>{TITLES[kind]}</H>
      <ul className="claims">
        {slots.map((slot, i) => (
          <Suspense key={id(slot, i)} fallback={null}>
            <Settled slot={slot} kind={kind} want={true} />
          </Suspense>
        ))}
        {/* Placeholders after the verified cards: an arriving card takes about a placeholder's place. */}
        {slots.map((slot, i) => (
          <Suspense key={`pending-${id(slot, i)}`} fallback={<ClaimSkeleton id={clipName(slot.id ?? "(no id)")} />}>
            <Pending slot={slot} />
          </Suspense>
        ))}
      </ul>
      <div className="unverified" data-testid={`unverified-${kind}`}>
        <SubH className="unverified-title">Not verified</SubH>
        <ul className="claims">
          {slots.map((slot, i) => (
            <Suspense key={id(slot, i)} fallback={null}>
              <Settled slot={slot} kind={kind} want={false} />
            </Suspense>
          ))}
        </ul>
      </div>
    </section>
  );
}

/** Claim slots from the staged resolver. */
export const fromStaged = (slots: ClaimSlot[]): Slot[] => slots.map((s) => ({ id: s.id, claim: s.result.then((r) => r.claim) }));
/** Claim slots from a finished result. */
export const fromClaims = (claims: Claim[]): Slot[] => claims.map((c) => ({ id: c.id, claim: c }));
